// A label mask read in bands of rows, each band traced and giving the pieces whose top row is in it, each piece whole.
import { byFirstPixel, pieceShapes, type PieceShape } from '../raster/label-pieces.js';
import { RunsDown, type MaskBand } from '../raster/strips.js';
import { traceLabelRings, type LabelMask, type LabelRings } from '../raster/trace.js';
import { censusOf, intensityReason, looksLikeIntensity, SAMPLED_FROM, sampleCensus } from '../raster/intensity.js';
import { ImageError } from '../report/errors.js';
import type { MaskFile } from './mask.js';

/**
 * Extra rows a band of pieces reads below its own at first (an eighth of the band, at least this many): a piece whose
 * top row is in the band and that reaches the last row read is read again down to where it ends (`pieceEnd`).
 */
const PIECE_REACH = 64;

/** One band's pieces: those whose top row is in rows [top, to), in raster order of first pixels, traced from row `from`. */
export interface PieceBand { rings: LabelRings; from: number; to: number; pieces: PieceShape[] }

/**
 * The mask's pieces band by band, `rows` rows a band, whatever the labels: each band gives the pieces whose top row
 * is in it, read from one row above it (a piece that reaches that row began above and was given there) down to past
 * the lowest of them. A mask segmented tile by tile and numbered afresh in each has labels reaching from top to
 * bottom, which bands by label read whole (800 MB of pixels at 20,000² px and 16 bits, 10 GB for a whole slide), where
 * its pieces are each a cell high; a class mask's class, where its pieces are regions. One piece reaching down the
 * whole mask (a class's web of regions all touching) is still read whole. `sample`: refuse an intensity image from
 * samples of each band's rows (`refuseIntensity`), which were not sampled before.
 */
export async function* pieceBands(path: string, mask: MaskFile, rows: number, sample: boolean): AsyncGenerator<PieceBand, void, undefined> {
  const { height } = mask;
  for (let top = 0; top < height;) {
    const from = Math.max(0, top - 1);
    let to = Math.min(height, top + rows);
    let end = Math.min(height, to + Math.max(PIECE_REACH, rows >> 3));
    for (let again = false; ; again = true) {
      const rings = await bandRings(path, mask, { top: from, to, end }, sample);
      // Read to the bottom, every piece below the band's top is whole: the band gives them all (a class mask's web).
      if (end === height) to = height;
      const own = pieceShapes(rings).filter((p) => p.top + from >= top && p.top + from < to);
      const cut = end < height ? own.filter((p) => p.bottom + from === end) : [];
      if (cut.length > 0) {
        // One row past where the cut pieces end, none reaches the band's new last row, unless one turns up and down
        // below it: cut again, the band grows by half as much again at least, so that a winding piece is not read once a turn.
        const past = (await pieceEnd(mask, new Set(cut.map((p) => p.label)), end - 1, rows)) + 2;
        end = Math.min(height, again ? Math.max(past, end + ((end - from) >> 1)) : past);
        continue;
      }
      yield { rings, from, to, pieces: own.sort(byFirstPixel) };
      break;
    }
    top = to;
  }
}

/** The last row that runs of `labels` in row `from` reach, followed down (`RunsDown`), read `rows` at a time. */
async function pieceEnd(mask: MaskFile, labels: ReadonlySet<number>, from: number, rows: number): Promise<number> {
  const runs = new RunsDown(labels);
  for (let top = from; top < mask.height; top += rows) {
    if (!runs.add(await mask.rows(top, Math.min(rows, mask.height - top)), mask.width, top)) break;
  }
  return runs.last;
}

/**
 * The rings of one band, its pixels let go before its labels are given (a class mask is one band: 400 MB of pixels at
 * 20,000² px, held while every class was built and parsed). `sample`: its rows were not sampled before.
 */
export async function bandRings(path: string, mask: MaskFile, band: MaskBand, sample: boolean): Promise<LabelRings> {
  const part = { width: mask.width, height: band.end - band.top, data: await mask.rows(band.top, band.end - band.top) };
  // Sampled before the trace: 36 million pixels of noise are as many rings, 2–3 GiB.
  if (sample) refuseIntensity(path, part, band.top, mask.height);
  const rings = traceLabelRings(part);
  const census = censusOf(rings, part);
  if (looksLikeIntensity(census)) throw new ImageError(path, intensityReason(census, part.height === mask.height ? '' : ` in rows ${band.top}–${band.end - 1}`));
  return rings;
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
