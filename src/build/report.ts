// Report stage of a build: the unit markers summed into the run report (build-report.json), and the PNG previews.
import type { Asset, TilesetDescriptor } from '../model/descriptor.js';
import type { Feature } from '../model/feature.js';
import { renderPreviewPng } from '../io/preview.js';
import type { BuildReport, ZoomReport } from '../report/types.js';
import type { BuildPlan } from '../stages/plan.js';
import { parseUnitKey } from '../stages/unit-key.js';
import { planeKey } from '../tiling/space.js';
import type { RunContext } from './context.js';
import type { ReadSummary, UnitMarker } from './state.js';

/** The markers of every level summed: what the descriptor (complete zooms) and the report need. */
export interface MarkerTotals {
  byZoom: Record<string, ZoomReport>;
  /** Per zoom, per layer. */
  pointified: number[][];
  thinned: number[][];
  largest: { path: string; bytes: number } | null;
  /** Meshes, counted once where they were read (upper levels see them again). */
  jsonOnly: number;
}

/** Sums the markers of every level (`markers[level]`, each in unit order). */
export function sumMarkers(plan: BuildPlan, markers: UnitMarker[][]): MarkerTotals {
  const byZoom: Record<string, ZoomReport> = {};
  const pointified: number[][] = [], thinned: number[][] = [];
  const L = plan.layers.length;
  for (let z = plan.minZoom; z <= plan.maxZoom; z++) {
    byZoom[z] = { tiles: 0, bytes: 0, json: { tiles: 0, bytes: 0 }, pbf: { tiles: 0, bytes: 0 }, features: 0, pointified: 0, thinned: 0 };
    pointified[z] = new Array<number>(L).fill(0);
    thinned[z] = new Array<number>(L).fill(0);
  }
  let largest: { path: string; bytes: number } | null = null;
  const jsonOnly = markers[0].reduce((n, m) => n + m.notInPbf, 0);
  for (const m of markers.flat()) {
    for (const [z, zr] of Object.entries(m.byZoom)) {
      const r = byZoom[z];
      r.json.tiles += zr.json.tiles; r.json.bytes += zr.json.bytes;
      r.pbf.tiles += zr.pbf.tiles; r.pbf.bytes += zr.pbf.bytes;
      r.tiles += zr.json.tiles + zr.pbf.tiles; r.bytes += zr.json.bytes + zr.pbf.bytes;
      r.features += zr.features;
    }
    m.pointified.forEach((row, z) => row?.forEach((v, l) => { pointified[z][l] += v; }));
    m.thinned.forEach((row, z) => row?.forEach((v, l) => { thinned[z][l] += v; }));
    if (m.largest && (!largest || m.largest.bytes > largest.bytes || (m.largest.bytes === largest.bytes && m.largest.path < largest.path))) largest = m.largest;
  }
  for (let z = plan.minZoom; z <= plan.maxZoom; z++) {
    byZoom[z].pointified = pointified[z].reduce((a, b) => a + b, 0);
    byZoom[z].thinned = thinned[z].reduce((a, b) => a + b, 0);
  }
  return { byZoom, pointified, thinned, largest, jsonOnly };
}

/** One PNG quicklook per plane, drawn from the plane's zoom-0 tile over the image when one was given. */
export async function writePreviews(ctx: RunContext, markers: UnitMarker[][]): Promise<Asset[]> {
  const { plan, preview } = ctx.planFile;
  const assets: Asset[] = [];
  for (const plane of plan.planes) {
    // The zoom-0 tile of a plane comes from one unit of some level.
    const overview = markers.flat().find((m) => m.overview !== undefined && planeKey(parseUnitKey(m.key).plane) === planeKey(plane))?.overview;
    const features = overview ? (JSON.parse(overview) as { features: Feature[] }).features : [];
    const { png } = await renderPreviewPng({ width: plan.world.width, height: plan.world.height, features, image: preview.image });
    const name = plan.dims.length ? `preview/${plan.dims.map((d) => `${d}${plane[d]}`).join('-')}.png` : 'preview/preview.png';
    await ctx.sink.write(name, png);
    const asset: Asset = { role: 'raster', href: name, media_type: 'image/png', title: `preview${plan.dims.length ? ` of ${plan.dims.map((d) => `${d}=${plane[d]}`).join(', ')}` : ''}` };
    // Foreign members: the plane a preview shows (viewers pick the one of the current plane) and the pixels it covers.
    for (const d of plan.dims) asset[d] = plane[d];
    asset.bbox = [0, 0, plan.world.width, plan.world.height];
    assets.push(asset);
  }
  return assets;
}

/** What a run adds to the report beside the markers: what was read, how the run went, and time per stage. */
export interface RunFacts {
  read: ReadSummary;
  units: number;
  resumed: number;
  timings: { read: number; tile: number; describe: number; total: number };
}

/** The run report; `descriptor` gives each layer's complete zooms. */
export function buildReport(ctx: RunContext, totals: MarkerTotals, descriptor: TilesetDescriptor, run: RunFacts): BuildReport {
  const { plan, spilled } = ctx.planFile;
  const byLayer: BuildReport['tiles']['byLayer'] = {};
  plan.layers.forEach((id, l) => {
    byLayer[id] = {
      pointified: totals.pointified.map((p) => p?.[l] ?? 0), thinned: totals.thinned.map((t) => t?.[l] ?? 0),
      completeZooms: descriptor.vector_layers[l].complete_zooms as number[],
    };
  });
  const sum = Object.values(totals.byZoom).reduce((a, z) => ({ tiles: a.tiles + z.tiles, bytes: a.bytes + z.bytes }), { tiles: 0, bytes: 0 });
  const r = run.read;
  return {
    features: {
      read: r.read, valid: r.valid, invalid: r.invalid,
      invalidByCode: sortedRecord(r.issues.errorsByCode), warningsByCode: sortedRecord(r.issues.warningsByCode),
      notPlaced: sortedRecord(r.skipped), jsonOnly: totals.jsonOnly, samples: r.issues.samples,
    },
    world: {
      ...plan.world, minZoom: plan.minZoom, maxZoom: plan.maxZoom, dims: plan.dims, planes: plan.planes.length, layers: plan.layers,
      ...(plan.outliers ? { outliers: plan.outliers } : {}),
    },
    tiles: { total: sum.tiles, bytes: sum.bytes, byZoom: totals.byZoom, byLayer, largest: totals.largest },
    units: { levels: plan.levels.length, total: run.units },
    run: { workers: ctx.config.options.workers, spilled, resumed: run.resumed },
    timings: run.timings,
  };
}

function sortedRecord(r: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(r).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
