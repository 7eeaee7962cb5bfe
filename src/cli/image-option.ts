// --image FILE: the world size comes from the image header (no pixels decoded), unless --image-size says otherwise.
import { readImageSize } from '../io/image.js';
import { InputError } from '../report/errors.js';
import type { Options } from '../options.js';

export async function imageSizeOption(options: Options): Promise<{ imageSize?: string }> {
  if (!options.image || options.imageSize) return {};
  try {
    const size = await readImageSize(options.image);
    return { imageSize: `${size.width},${size.height}` };
  } catch (e) {
    throw new InputError(e instanceof Error ? e.message : String(e), options.image);
  }
}
