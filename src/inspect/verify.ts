// `verify`: checks a built pyramid end to end — descriptor, overviews, every tile decodes and lies in the bounds,
// JSON and PBF tiles agree feature for feature, tiles stay within the budget, the run report matches the files.
// This file walks the pyramid; the checks, each returning the problems it finds, are in verify-*.ts.
import type { FeatureCollection } from '../model/feature.js';
import { OPTIONS, refuseUnknown, shown, sizeOf } from '../options.js';
import { InputError, UsageError } from '../report/errors.js';
import { addManifest, MANIFEST_PATH } from '../io/written.js';
import { planeKey, type Plane } from '../tiling/space.js';
import type { PbfLayer } from './decode.js';
import { isOverview, listZoomTiles, openPyramid, overviewPath, zoomDirs, type Pyramid, type TileRef } from './layout.js';
import type { PyramidReader } from './reader.js';
import { checkDescriptor, checkOverview, FieldCheck, OverviewMatch } from './verify-descriptor.js';
import { BoundsCheck, checkReportWorld, checkZooms, type ReportFacts } from './verify-extent.js';
import { decodeJsonBytes, problem, ProblemList, type Problem, type ProblemCode } from './verify-problems.js';
import { checkReport, type ZoomCount } from './verify-report.js';
import { checkBudget, checkJsonTile, checkPbfTile, checkPlacement, compareTile, eachPosition, jsonTagLayers, pbfEncodable, zoomFrame } from './verify-tiles.js';
import { withCode } from '../report/coded.js';

export type { Problem, ProblemCode } from './verify-problems.js';

export interface VerifyOptions {
  /**
   * Largest allowed tile below the finest zoom, in bytes (or as the CLI takes it: `512K`). Default: the budget the build report says the build held
   * (none with `--lod none`), else the build's default `--tile-budget`.
   */
  tileBudget?: number | string;
  /** Problems kept per code; the rest are only counted, and count in `ok` (default 50; 0 keeps none). */
  maxPerCode?: number;
}

export interface VerifyResult {
  ok: boolean;
  /** Up to `maxPerCode` problems of each code, in the order found. */
  problems: Problem[];
  /** Every problem counted by code, including those not kept. */
  counts: Partial<Record<ProblemCode, number>>;
  checked: { tiles: number; features: number };
  /** What was not checked, and why (a single archive copied without its report). */
  notes: string[];
}

function anyJson(p: Pyramid, z: number): boolean {
  for (const t of listZoomTiles(p, z)) if (t.ext === 'json') return true;
  return false;
}

/** A tile's bytes; one that cannot be read (an archive's tile whose gzip does not decode) is a problem of its own. */
function readTile(p: Pyramid, rel: string, out: ProblemList): Uint8Array | undefined {
  try {
    return p.reader.read(rel);
  } catch (err) {
    if (!(err instanceof InputError)) throw err;
    out.add([problem('tile-undecodable', rel, err.message)]);
    return undefined;
  }
}

/** Checks a whole pyramid; never throws for what it finds (a missing or unusable descriptor is a problem too). */
/** The caller's options checked as a build's are (by name, sizes as text too): a misspelt budget would go unheld. */
function checkedOptions(given: VerifyOptions | null): { tileBudget?: number; maxPerCode: number } {
  const opts = given ?? {};
  refuseUnknown(opts, ['tileBudget', 'maxPerCode']);
  const tileBudget = sizeOf('tileBudget', opts.tileBudget ?? undefined);
  // Said as the build says it (--tile-budget): the CLI's verify gives it so.
  if (tileBudget !== undefined && !(typeof tileBudget === 'number' && tileBudget > 0)) throw new UsageError(`--tile-budget must be positive, found ${shown(tileBudget)}`);
  const maxPerCode = opts.maxPerCode ?? 50;
  if (!Number.isInteger(maxPerCode) || maxPerCode < 0) throw new UsageError(`maxPerCode must be a whole number of at least 0, found ${shown(maxPerCode)}`);
  return { tileBudget: tileBudget as number | undefined, maxPerCode };
}

export function verifyPyramid(root: string | PyramidReader, given: VerifyOptions | null = {}): VerifyResult {
  const opts = checkedOptions(given);
  const out = new ProblemList(opts.maxPerCode);
  let p: Pyramid;
  try {
    p = openPyramid(root);
  } catch (err) {
    if (!(err instanceof InputError)) throw err;
    out.add([problem('descriptor-unusable', 'tileset.json', err.message)]);
    return { ok: false, problems: out.list, counts: out.counts, checked: { tiles: 0, features: 0 }, notes: [] };
  }
  out.add(p.reader.problems ?? []);
  out.add(checkDescriptor(p));
  const notes: string[] = [...(p.reader.notes ?? [])];
  const report = p.reader.read('build-report.json');
  const facts = reportFacts(report);
  const held = opts.tileBudget ?? heldBudget(report);
  if (held === null) notes.push('tile sizes were not held to a budget: the build used --lod none (give --tile-budget to check them)');
  if (held === undefined) notes.push('no build report says which budget the build held (--tile-budget, or none with --lod none): tile sizes are not checked (give --tile-budget to check them)');
  const budget = held ?? Infinity;
  const fields = new FieldCheck(p.descriptor);
  const twinsReadable = !(p.reader.problems ?? []).some((x) => x.code === 'archive-invalid');
  const layerIds = new Set((Array.isArray(p.descriptor.vector_layers) ? p.descriptor.vector_layers : []).map((l) => l.id));
  const pbfBuilt = p.format === 'pbf';
  const zooms = zoomDirs(p);
  // A file named as no tile (`0/data.csv`, a user's, which builds leave where it is) is no fault of the pyramid: noted.
  const others: string[] = [];
  const stray = (path: string, why?: string) => {
    const temporary = /\.tmp-/.test(path);
    if (why === undefined && !temporary && !/\.(json|pbf)$/.test(path)) others.push(path);
    else out.add([problem('stray-file', path, why ?? (temporary ? 'a temporary file left by an interrupted write' : 'not a tile of this layout'))]);
  };
  const zoom0 = zooms.includes(0) ? [...listZoomTiles(p, 0, stray)] : [];
  // JSON tiles were built when the report counts some; without one, when an overview is there, or (the overview
  // lost) when any zoom holds a JSON tile. A stray JSON file in a PBF pyramid with its report is then one file.
  const reported = reportedJsonTiles(facts);
  const jsonBuilt = p.format === 'json' || (reported !== undefined ? reported > 0 : zoom0.some(isOverview) || zooms.some((z) => z > 0 && anyJson(p, z)));
  const both = pbfBuilt && jsonBuilt;
  const counted = new Map<number, ZoomCount>();
  const overviews = new Set<string>();
  const jsonPlanes = new Map<string, Plane>();
  // What the descriptor declares against what the tiles hold: zooms with a tile of features, their reach, the overviews.
  const tiled = new Set<number>();
  const bounds = new BoundsCheck(p);
  const overviewMatch = new OverviewMatch(p);
  let tilesChecked = 0, featuresChecked = 0;

  for (const z of zooms) {
    const tiles = z === 0 ? zoom0 : [...listZoomTiles(p, z, stray)];
    // A folder named by a number holding no tile (a user's `2024/holiday/`, which builds leave) is no zoom: its files are noted.
    if ((z < p.minZoom || z > p.maxZoom) && tiles.some((t) => !(z === 0 && isOverview(t)))) {
      out.add([problem('zoom-outside-range', String(z), `zoom directory ${z} is outside minzoom–maxzoom ${p.minZoom}–${p.maxZoom}`)]);
    }
    const ctx = zoomFrame(p, z, budget, layerIds);
    const count: ZoomCount = { json: { tiles: 0, bytes: 0 }, pbf: { tiles: 0, bytes: 0 } };
    counted.set(z, count);
    // Twins (JSON and PBF of one tile) are next to each other in a directory listing only by accident: pair them by key.
    const pairs = new Map<string, { json?: TileRef; pbf?: TileRef }>();
    for (const t of tiles) {
      const key = t.path.replace(/\.(json|pbf)$/, '');
      const pair = pairs.get(key) ?? {};
      pair[t.ext] = t;
      pairs.set(key, pair);
    }
    for (const pair of pairs.values()) {
      if (pair.json && !jsonBuilt) {
        stray(pair.json.path, 'a JSON tile in a pyramid built without JSON tiles (its report counts none)');
        pair.json = undefined;
        if (!pair.pbf) continue;
      }
      const ref = (pair.pbf ?? pair.json) as TileRef;
      if (!isOverview(ref)) tiled.add(z);
      const misplaced = checkPlacement(ctx, ref);
      out.add(misplaced);
      let json: FeatureCollection | null = null, pbf: PbfLayer[] | null = null;
      if (pair.json) {
        const bytes = readTile(p, pair.json.path, out);
        if (bytes !== undefined) {
          tilesChecked++;
          if (isOverview(pair.json)) {
            overviews.add(pair.json.path);
            out.add(checkOverview(p, pair.json, bytes));
            overviewMatch.add(pair.json, bytes);
          } else {
            count.json.tiles++; count.json.bytes += bytes.length;
            jsonPlanes.set(planeKey(pair.json.plane), pair.json.plane);
            // The budget holds the PBF tiles viewers stream; JSON tiles only in a pyramid without them.
            if (!pbfBuilt) out.add(checkBudget(ctx, pair.json, bytes.length));
            const checked = checkJsonTile(ctx, pair.json, bytes);
            out.add(checked.problems);
            json = checked.fc;
            featuresChecked += json?.features.length ?? 0;
            // Without PBF tiles, the fields JSON tiles carry are held to the descriptor's (with them, to the PBF tiles').
            if (json && !pbfBuilt) out.add(fields.check(pair.json.path, jsonTagLayers(json), pair.json.z));
          }
        }
      }
      if (pair.pbf) {
        const bytes = readTile(p, pair.pbf.path, out);
        if (bytes !== undefined) {
          tilesChecked++;
          count.pbf.tiles++; count.pbf.bytes += bytes.length;
          out.add(checkBudget(ctx, pair.pbf, bytes.length));
          const checked = checkPbfTile(ctx, pair.pbf, bytes);
          out.add(checked.problems);
          pbf = checked.layers;
          if (pbf) out.add(fields.check(pair.pbf.path, pbf, pair.pbf.z));
          if (pbf && !json) for (const l of pbf) featuresChecked += l.features.length;
        }
      }
      // A tile off its grid or plane has its own problem: where its features lie says nothing more.
      if (misplaced.length === 0 && (json || pbf)) bounds.add(ctx, ref.path, (visit) => eachPosition(json, pbf, visit));
      if (!both || z === 0 || misplaced.length > 0) continue;
      // An archive that cannot be read holds the missing twins: it is named once (archive-invalid), not once per tile.
      if (!twinsReadable && (!pair.pbf || !pair.json)) continue;
      if (pair.pbf && !pair.json) {
        out.add([problem('format-mismatch', pair.pbf.path, 'PBF tile without its JSON tile (JSON tiles hold every feature PBF tiles hold)')]);
      } else if (pair.json && !pair.pbf) {
        const n = pbfEncodable(json);
        if (n > 0) out.add([problem('format-mismatch', pair.json.path, `JSON tile with ${n} PBF-encodable feature(s) but no PBF tile`)]);
      } else if (json && pbf) {
        const diff = compareTile(json, pbf);
        if (diff) out.add([problem('feature-mismatch', (pair.json as TileRef).path, `JSON and PBF tiles differ: ${diff}`)]);
      }
    }
  }
  if (jsonPlanes.size) {
    for (const plane of jsonPlanes.values()) {
      const path = overviewPath(p, plane);
      if (!overviews.has(path)) out.add([problem('overview-missing', path, 'the plane has JSON tiles but no overview descriptor at zoom 0')]);
    }
  }
  // A JSON-only pyramid's zoom 0 holds the overviews alone (their own check names one missing).
  const zoomCheck = checkZooms(p, tiled, facts, pbfBuilt ? 0 : 1);
  out.add(zoomCheck.problems);
  out.add(bounds.problems());
  out.add(overviewMatch.problems());
  out.add(checkReportWorld(p, facts));
  if (others.length > 0) notes.push(`${others.length} entr${others.length === 1 ? 'y' : 'ies'} in the zoom folders not named as tiles, not part of the pyramid (a viewer never asks for them): ${others.slice(0, 5).join(', ')}${others.length > 5 ? ', …' : ''}`);
  if (report === undefined && p.reader.wholeWithoutReport) {
    notes.push('no build report beside the archive, so the tile counts were not compared with it');
  } else if (report === undefined && extractedWithoutReport(p.reader)) {
    notes.push('no build report: extracted from an archive that had none beside it, so the tile counts were not compared with it');
  } else {
    out.add(checkReport(report, counted, zoomCheck.missing));
  }
  return { ok: Object.keys(out.counts).length === 0, problems: out.list, counts: out.counts, checked: { tiles: tilesChecked, features: featuresChecked }, notes };
}

/** The parts of a build report the checks read, or undefined without a readable one (checkReport says why). */
function reportFacts(report: Uint8Array | undefined): ReportFacts | undefined {
  let doc: unknown;
  try {
    doc = report && decodeJsonBytes(report);
  } catch {
    return undefined;
  }
  if (doc === null || typeof doc !== 'object') return undefined;
  const r = doc as { tiles?: { byZoom?: unknown }; world?: unknown };
  const byZoom = r.tiles !== null && typeof r.tiles === 'object' && r.tiles.byZoom !== null && typeof r.tiles.byZoom === 'object' ? r.tiles.byZoom : undefined;
  const world = r.world !== null && typeof r.world === 'object' && !Array.isArray(r.world) ? r.world : undefined;
  return { byZoom: byZoom as ReportFacts['byZoom'], world: world as ReportFacts['world'] };
}

/** How many JSON tiles a build report counts, or undefined without a readable one. */
function reportedJsonTiles(facts: ReportFacts | undefined): number | undefined {
  const byZoom = facts?.byZoom;
  if (!byZoom) return undefined;
  return Object.values(byZoom).reduce((n, z) => n + (typeof z?.json?.tiles === 'number' ? z.json.tiles : 0), 0);
}

/**
 * The budget a build report says its build held tiles to: bytes, null for none (`--lod none`), the default budget
 * when the report predates the field (what builds then held unless told otherwise), undefined without a report.
 */
function heldBudget(report: Uint8Array | undefined): number | null | undefined {
  // Without one (an archive copied alone, its extract) it is not known: held to the default, a build of
  // --tile-budget 2M or --lod none was a false alarm.
  if (report === undefined) return undefined;
  let budget: unknown;
  try {
    budget = (decodeJsonBytes(report) as { tiles?: { thinning?: { budget?: unknown } } } | null)?.tiles?.thinning?.budget;
  } catch {
    budget = undefined; // checkReport says what is wrong with it
  }
  return budget === null || (typeof budget === 'number' && budget > 0) ? budget : OPTIONS.tileBudget.default;
}

/**
 * Whether the record of what was written here (`.mudm-written/manifest.json`) lists the descriptor and no report: a
 * build always writes its report, so the writer was `extract` of an archive copied without one. A report a user
 * removed stays listed, and stays a problem.
 */
function extractedWithoutReport(reader: PyramidReader): boolean {
  const bytes = reader.read(MANIFEST_PATH);
  if (bytes === undefined) return false;
  const { files } = addManifest({ dirs: new Set(), files: new Set() }, Buffer.from(bytes).toString('utf8'));
  return files.has('tileset.json') && !files.has('build-report.json');
}

/** Problems as text, one per line, with the count of those not listed. */
export function formatProblems(r: VerifyResult): string {
  const lines = r.problems.map((x) => withCode(`${x.path}: ${x.message}`, x.code));
  const total = Object.values(r.counts).reduce((a, b) => a + (b ?? 0), 0);
  if (total > r.problems.length) lines.push(`… and ${total - r.problems.length} more (${Object.entries(r.counts).map(([k, v]) => `${k}: ${v}`).join(', ')})`);
  return `${lines.join('\n')}\n`;
}
