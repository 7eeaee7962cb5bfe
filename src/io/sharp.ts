// sharp (libvips), loaded on first use: a build without an image, a mask or a preview never pays its start-up.

import type sharpFn from 'sharp';

/** The sharp function; the module is loaded once (the module cache keeps it), 0.1 s and its libraries' memory. */
export async function loadSharp(): Promise<typeof sharpFn> {
  return (await import('sharp')).default;
}
