// A label mask read in bands of rows, each band traced alone, giving its pieces whole in raster order (stitched across cuts).
import { BandStitch } from '../raster/band-stitch.js';
import { byFirstPixel, pieceShapes } from '../raster/label-pieces.js';
import { PieceOrder, type PieceBand } from '../raster/piece-order.js';
import { traceLabelRings, type LabelMask, type LabelRings } from '../raster/trace.js';
import { censusOf, intensityReason, looksLikeIntensity, SAMPLED_FROM, sampleCensus } from '../raster/intensity.js';
import { ImageError } from '../report/errors.js';
import type { MaskFile } from './mask.js';

export type { PieceBand };

/**
 * The mask's pieces band by band, `rows` rows a band, whatever the labels, in raster order of their first pixels. Each
 * band is read once (and the row below it, to see which pieces cross into the next) and traced alone; a piece that
 * crosses a cut between bands (a class mask's web of regions touching from its top to its bottom, a cell of a mask
 * numbered afresh in each tile) is stitched across the cuts (`BandStitch`) into the rings the mask traced whole gives,
 * and it and every piece after it are held as packed outlines (`PieceOrder`) until it is whole. No more than a band
 * of pixels (and two rows) is held at once. `sample`: refuse an intensity image from samples of each band's rows
 * (`refuseIntensity`), which were not sampled before.
 */
export async function* pieceBands(path: string, mask: MaskFile, rows: number, sample: boolean): AsyncGenerator<PieceBand, void, undefined> {
  const { width: W, height: H } = mask;
  const stitch = new BandStitch();
  const order = new PieceOrder();
  let prev: LabelMask['data'] | undefined;
  for (let a = 0; a < H; a += rows) {
    const b = Math.min(H, a + rows);
    const read = await mask.rows(a, Math.min(H, b + 1) - a);
    const data = read.subarray(0, (b - a) * W), next = b < H ? read.subarray((b - a) * W) : undefined;
    const rings = traceBand(path, { width: W, height: b - a, data }, a, H, sample);
    const { whole, done, frontier } = stitch.band(rings, pieceShapes(rings), { W, H, a, b, data, prev, next });
    prev = data.slice((b - a - 1) * W);
    order.add(done);
    whole.sort(byFirstPixel);
    // A piece open above this band: its pieces wait for it, and so do those held.
    if (frontier < a) {
      order.hold(rings, whole, a);
      yield* order.before(frontier);
      continue;
    }
    yield* order.before(a);
    const given = whole.filter((p) => p.top + a < frontier);
    order.hold(rings, whole.slice(given.length), a);
    yield { rings, from: a, to: b === H ? H : Math.min(frontier, b), pieces: given };
  }
}

/** The rings of a band of rows from row `top` of a mask `height` high, refused as an intensity image. */
function traceBand(path: string, part: LabelMask, top: number, height: number, sample: boolean): LabelRings {
  // Sampled before the trace: 36 million pixels of noise are as many rings, 2–3 GiB.
  if (sample) refuseIntensity(path, part, top, height);
  const rings = traceLabelRings(part);
  const census = censusOf(rings, part);
  if (looksLikeIntensity(census)) throw new ImageError(path, intensityReason(census, part.height === height ? '' : ` in rows ${top}–${top + part.height - 1}`));
  return rings;
}

/**
 * The rings of a mask read whole (one of up to a band's bytes), its pixels let go before its labels are given, its
 * rows sampled for an intensity image first.
 */
export async function wholeRings(path: string, mask: MaskFile): Promise<LabelRings> {
  const part = { width: mask.width, height: mask.height, data: await mask.rows(0, mask.height) };
  return traceBand(path, part, 0, mask.height, true);
}

/**
 * Refuses rows of a mask (from row `top` of `height`) whose sampled windows hold the pieces of an intensity image
 * (`looksLikeIntensity`): tiny, bordering one another. Windows of a real mask say nothing against it, and rows of
 * SAMPLED_FROM pixels or fewer are not sampled: the trace is checked whole after.
 */
export function refuseIntensity(path: string, part: LabelMask, top: number, height: number): void {
  if (part.width * part.height <= SAMPLED_FROM) return;
  const sample = sampleCensus(part);
  if (!looksLikeIntensity(sample)) return;
  const where = part.height === height ? 'across it' : `from rows ${top}–${top + part.height - 1}`;
  throw new ImageError(path, intensityReason(sample, ` in ${sample.windows} windows of up to 256 × 256 px sampled ${where}`));
}
