// The pyramid's pixel size: the inputs' multiscale, else the one the --image file states; a warning when that image
// states another size than the inputs, and one line of information when the only sizes stated were defaults, not taken.
import { pixelOf, sameSize, type PixelSize } from '../model/multiscale.js';
import { pixelSizeMultiscale, pixelSizeText } from '../io/pixel-size.js';
import type { ImagePixel } from '../options.js';
import type { BuildIO } from './context.js';
import type { ReadSummary } from './state.js';

/** An input file that states a pixel size that was not taken (a print default), and what it states. */
export interface IgnoredPixelSize { file: string; stated: string }

/**
 * Gives `collection` the image's pixel size when no input has a multiscale. The inputs' own multiscale (`keptFrom`:
 * the input it came from) is kept when it has one: the annotations say what their coordinates are, and an image given
 * to size the world may be another scan or level of the slide; the build says so when the two disagree. When nothing
 * gives a size and a file states only a default that was not taken (`ignored`, the image's first), one line says so:
 * a person who sees "300 dpi" in an image viewer would otherwise wonder where the size went.
 */
export function choosePixelSize(collection: ReadSummary['collection'], keptFrom: string | undefined, image: ImagePixel | undefined, ignored: readonly IgnoredPixelSize[], io: BuildIO): void {
  const size = image?.size;
  if (collection.multiscale !== undefined) {
    const own = pixelOf(collection.multiscale);
    if (image === undefined || size === undefined || (own !== undefined && samePixel(own, size))) return;
    const theirs = own ? `a pixel of ${pixelSizeText(own)}` : 'no pixel size (no axes x and y with units)';
    io.onWarning?.(
      `--image ${image.file} states a pixel of ${pixelSizeText(size)}, and the multiscale of ${keptFrom} ${theirs}: the descriptor keeps ${keptFrom}'s, as the annotations' own statement of their coordinates; is ${image.file} the slide they were drawn on, at the resolution they were drawn at?`,
      { event: 'image-pixel-size-differs', image: image.file, imagePixel: size, inputsPixel: own ?? null, keptFrom },
    );
    return;
  }
  if (size !== undefined) {
    collection.multiscale = pixelSizeMultiscale(size);
    return;
  }
  const all = [...(image?.ignored !== undefined ? [{ file: image.file, stated: image.ignored }] : []), ...ignored];
  if (all.length === 0) return;
  const [{ file, stated }] = all;
  const others = all.length > 1 ? ` (and ${all.length - 1} other file(s) a default too)` : '';
  // Information, not a warning: nothing is amiss (the file states no size), and a pipeline that fails on warnings
  // would fail on every PNG libvips wrote; but it is one line, by default, so no one looks for a size in vain.
  io.onInfo?.(`${file} states ${stated}: no pixel size taken${others}, so the descriptor says nothing of the pixel's physical size; give the annotations a multiscale, or write the file with its real pixel size`, { event: 'pixel-size-default', file, stated, files: all.length });
}

/** Whether two pixel sizes are one along x and along y, in whatever units each is given. */
function samePixel(a: PixelSize, b: PixelSize): boolean {
  return sameSize(a.x, a.unitX, b.x, b.unitX) && sameSize(a.y, a.unitY, b.y, b.unitY);
}
