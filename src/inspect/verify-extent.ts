// verify: what the descriptor and the report declare of the pyramid's extent (zooms, bounds, world) against the tiles found.
import { tilePad } from '../tiling/space.js';
import type { Pyramid } from './layout.js';
import type { ZoomFrame } from './verify-tiles.js';
import { problem, type Problem } from './verify-problems.js';

/** The parts of a build report these checks read, as found (any member may be missing or of another type). */
export interface ReportFacts {
  byZoom?: Record<string, { json?: { tiles?: unknown }; pbf?: { tiles?: unknown } } | undefined>;
  world?: Record<string, unknown>;
}

const count = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** Tiles a report counts at a zoom, or undefined when it has no usable count of tiles by zoom. */
function reportedTiles(report: ReportFacts | undefined, z: number): { json: number; pbf: number } | undefined {
  const byZoom = report?.byZoom;
  if (byZoom === null || typeof byZoom !== 'object') return undefined;
  const zr = Object.hasOwn(byZoom, String(z)) ? byZoom[String(z)] : undefined;
  return { json: count(zr?.json?.tiles), pbf: count(zr?.pbf?.tiles) };
}

/** The layers of the descriptor that draw features at zoom `z`: all but those whose `kept_fraction` there is 0. */
function drawingLayers(p: Pyramid, z: number): string[] {
  const layers = Array.isArray(p.descriptor.vector_layers) ? p.descriptor.vector_layers : [];
  return layers.filter((l) => {
    const kept = l !== null && typeof l === 'object' && l.kept_fraction !== null && typeof l.kept_fraction === 'object' ? (l.kept_fraction as Record<string, unknown>)[String(z)] : undefined;
    return kept !== 0;
  }).map((l) => JSON.stringify(l?.id));
}

/** Why the pyramid says zooms `from`–`to` draw something: the report's counts where there are some, else the layers. */
function declared(p: Pyramid, report: ReportFacts | undefined, from: number, to: number): string {
  let json = 0, pbf = 0;
  for (let z = from; z <= to; z++) {
    const r = reportedTiles(report, z);
    json += r?.json ?? 0;
    pbf += r?.pbf ?? 0;
  }
  if (reportedTiles(report, from) !== undefined) return `build-report.json counts ${json + pbf} tile(s) there (${pbf} PBF, ${json} JSON)`;
  const ids = [...new Set(Array.from({ length: to - from + 1 }, (_, i) => drawingLayers(p, from + i)).flat())];
  const shown = ids.length > 3 ? `${ids.slice(0, 3).join(', ')}, …` : ids.join(', ');
  return `its layer${ids.length === 1 ? '' : 's'} ${shown} draw${ids.length === 1 ? 's' : ''} features there (no kept_fraction of 0)`;
}

/**
 * The zooms of minzoom–maxzoom that hold no tile though the pyramid says they draw something (a zoom folder removed,
 * an archive short of a zoom), each run of consecutive zooms said once. Whether a zoom draws: the report's count
 * where there is one (what the build wrote), else the descriptor's layers (a tight budget thins a coarse zoom to
 * nothing, `kept_fraction` 0, and the build writes no tile there). `held`: the zooms holding a tile of features;
 * `firstDataZoom`: a JSON-only pyramid's zoom 0 holds the overviews alone, which their own check names.
 */
export function checkZooms(p: Pyramid, held: ReadonlySet<number>, report: ReportFacts | undefined, firstDataZoom: number): { problems: Problem[]; missing: Set<number> } {
  const d = p.descriptor;
  const missing = new Set<number>();
  // Without both written, the range is not declared (descriptor-layout says so), and a default maxzoom of 30 would flood.
  if (!Number.isInteger(d.minzoom) || !Number.isInteger(d.maxzoom) || p.minZoom > p.maxZoom) return { problems: [], missing };
  const runs: { from: number; to: number }[] = [];
  for (let z = Math.max(firstDataZoom, p.minZoom); z <= p.maxZoom; z++) {
    if (held.has(z)) continue;
    const r = reportedTiles(report, z);
    if (r !== undefined ? r.json + r.pbf === 0 : drawingLayers(p, z).length === 0) continue;
    missing.add(z);
    const last = runs[runs.length - 1];
    if (last && last.to === z - 1) last.to = z;
    else runs.push({ from: z, to: z });
  }
  const archives = p.reader.archives ?? [];
  const none = (one: boolean) => (archives.length === 1 ? `${one ? 'is' : 'are'} not in ${archives[0].path}`
    : archives.length > 1 ? `${one ? 'is' : 'are'} in none of the archives` : `hold${one ? 's' : ''} no tile`);
  return {
    missing,
    problems: runs.map((r) => problem('zoom-missing', String(r.from),
      `${r.from === r.to ? `zoom ${r.from} ${none(true)}` : `zooms ${r.from}–${r.to} ${none(false)}`}, but tileset.json declares minzoom–maxzoom ${p.minZoom}–${p.maxZoom} and ${declared(p, report, r.from, r.to)}`)),
  };
}

const TOLERANCE = 1e-6;
const box = (b: readonly number[]): string => `[${b.join(', ')}]`;

/**
 * The descriptor's `bounds` against the features in the tiles: a tile holds its features up to its buffer beyond its
 * edges (a feature reaching below 0 in a world from the data is cut there), so a position farther beyond the bounds
 * than that is one the bounds do not cover. All tiles together are said once.
 */
export class BoundsCheck {
  private readonly reach = [Infinity, Infinity, -Infinity, -Infinity];
  private beyond = 0;
  private readonly tiles = new Set<string>();
  private first = '';

  constructor(private readonly p: Pyramid) {}

  /** The positions of one placed tile (`each` visits them). */
  add(ctx: ZoomFrame, path: string, each: (visit: (x: number, y: number) => void) => void): void {
    const [bx0, by0, bx1, by1] = this.p.box;
    const slack = tilePad(ctx.ts) + TOLERANCE;
    const r = this.reach;
    each((x, y) => {
      if (!Number.isFinite(x) || !Number.isFinite(y)) return;
      if (x < r[0]) r[0] = x;
      if (y < r[1]) r[1] = y;
      if (x > r[2]) r[2] = x;
      if (y > r[3]) r[3] = y;
      if (x < bx0 - slack || y < by0 - slack || x > bx1 + slack || y > by1 + slack) {
        if (this.beyond++ === 0) this.first = `[${x}, ${y}] in ${path}`;
        this.tiles.add(path);
      }
    });
  }

  problems(): Problem[] {
    if (this.beyond === 0) return [];
    return [problem('bounds-mismatch', 'tileset.json', `bounds ${box(this.p.descriptor.bounds ?? [])} do not cover the features in the tiles: `
      + `${this.beyond} position(s) in ${this.tiles.size} tile(s) lie beyond them by more than a tile's buffer, the first ${this.first}; `
      + `the features reach ${box(this.reach)}`)];
  }
}

/** The report's world against the descriptor: one problem naming every member that differs. */
export function checkReportWorld(p: Pyramid, report: ReportFacts | undefined): Problem[] {
  const w = report?.world;
  if (w === null || typeof w !== 'object' || Array.isArray(w)) return [];
  const d = p.descriptor;
  const diffs: string[] = [];
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  const [, , width, height] = p.box;
  if (w.width !== undefined && !same(w.width, width)) diffs.push(`width ${JSON.stringify(w.width)} here, ${width} in tileset.json's bounds ${box(d.bounds ?? [])}`);
  if (w.height !== undefined && !same(w.height, height)) diffs.push(`height ${JSON.stringify(w.height)} here, ${height} in tileset.json's bounds ${box(d.bounds ?? [])}`);
  if (w.side !== undefined && !same(w.side, p.side)) diffs.push(`side ${JSON.stringify(w.side)} here, ${p.side} from tileset.json's bounds`);
  if (w.minZoom !== undefined && Number.isInteger(d.minzoom) && !same(w.minZoom, d.minzoom)) diffs.push(`minZoom ${JSON.stringify(w.minZoom)} here, minzoom ${d.minzoom} in tileset.json`);
  if (w.maxZoom !== undefined && Number.isInteger(d.maxzoom) && !same(w.maxZoom, d.maxzoom)) diffs.push(`maxZoom ${JSON.stringify(w.maxZoom)} here, maxzoom ${d.maxzoom} in tileset.json`);
  if (w.dims !== undefined && !same(w.dims, p.dims)) diffs.push(`dims ${JSON.stringify(w.dims)} here, ${JSON.stringify(p.dims)} in tileset.json's tiles template`);
  const ids = Array.isArray(d.vector_layers) ? d.vector_layers.map((l) => l?.id) : [];
  if (w.layers !== undefined && !same(w.layers, ids)) diffs.push(`layers ${JSON.stringify(w.layers)} here, ${JSON.stringify(ids)} in tileset.json's vector_layers`);
  return diffs.length ? [problem('report-mismatch', 'build-report.json', `world differs from tileset.json: ${diffs.join('; ')}`)] : [];
}
