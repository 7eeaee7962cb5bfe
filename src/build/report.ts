// Report stage of a build: the unit markers summed into the run report (build-report.json), and the previews: the
// quicklook of each plane put together from the level-0 units' patches, and the slide image downsampled.
import { setOwn } from '../model/own.js';
import type { Asset, TilesetDescriptor } from '../model/descriptor.js';
import type { Feature } from '../model/feature.js';
import { FlatValue } from '../tiling/flat-value.js';
import { PREVIEW_MAX_SIDE, backgroundJpeg, composePreview, imageBackground, previewGrid } from '../io/preview.js';
import { PREVIEW_IMAGE, type WorkDir } from '../io/workdir.js';
import { WorkStateError } from '../report/errors.js';
import { placePatch } from '../raster/paint.js';
import { MANY_PIECES } from '../raster/features.js';
import type { Scattered } from '../raster/scattered.js';
import type { Recurring } from '../raster/strips.js';
import type { BuildReport, ZoomReport } from '../report/types.js';
import type { BuildPlan, UnitPlan } from '../stages/plan.js';
import { PRIORITY_RANGE } from '../stages/thinning.js';
import type { TileTask } from '../stages/unit.js';
import { parseUnitKey } from '../stages/unit-key.js';
import { MAX_WORLD_SIDE, planeKey, tilePad, tileSize } from '../tiling/space.js';
import type { BuildConfig } from '../options.js';
import { sampleLine, skippedText } from '../validate/tally.js';
import type { CodedFields } from '../report/coded.js';
import type { InputSpec, RunContext } from './context.js';
import type { PlanFile, ReadSummary } from './state.js';
import type { UnitMarker } from './unit-log.js';

/** The markers of every level summed: what the descriptor (complete zooms, kept fractions) and the report need. */
export interface MarkerTotals {
  byZoom: Record<string, ZoomReport>;
  /** Per zoom, per layer: features drawn as points (counted per tile), thinned (not drawn), share drawn; the last two count a feature of many pieces by its pieces (unit.ts). */
  pointified: number[][];
  thinned: number[][];
  keptFraction: number[][];
  largest: { path: string; bytes: number } | null;
  /** Meshes, counted once where they were read (upper levels see them again). */
  jsonOnly: number;
}

/**
 * The planes (`planeKey`) whose units wrote PBF tiles: a plane of meshes alone has none (PBF does not carry them),
 * and gets no PBF archive under `--archive` (PMTiles has no empty archive), as a directory build has no such tiles.
 */
export function planesWithPbf(markers: UnitMarker[][]): Set<string> {
  const out = new Set<string>();
  for (const m of markers.flat()) {
    if (Object.values(m.byZoom).some((z) => z.pbf.tiles > 0)) out.add(planeKey(parseUnitKey(m.key).plane));
  }
  return out;
}

/** Sums the markers of every level (`markers[level]`, each in unit order). */
export function sumMarkers(plan: BuildPlan, markers: UnitMarker[][]): MarkerTotals {
  const byZoom: Record<string, ZoomReport> = {};
  const pointified: number[][] = [], kept: number[][] = [];
  const L = plan.layers.length;
  for (let z = plan.minZoom; z <= plan.maxZoom; z++) {
    byZoom[z] = { tiles: 0, bytes: 0, json: { tiles: 0, bytes: 0 }, pbf: { tiles: 0, bytes: 0 }, features: 0, pointified: 0, thinned: 0 };
    pointified[z] = new Array<number>(L).fill(0);
    kept[z] = new Array<number>(L).fill(0);
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
    // Each zoom is tiled by one level, whose units each count their own features: a feature is counted once.
    m.kept.forEach((row, z) => row?.forEach((v, l) => { kept[z][l] += v; }));
    if (m.largest && (!largest || m.largest.bytes > largest.bytes || (m.largest.bytes === largest.bytes && m.largest.path < largest.path))) largest = m.largest;
  }
  // The layer's total: the features level 0 (which tiles the finest zoom) was given, each counted by its home unit
  // (a feature of many pieces by its pieces, as a zoom draws a share of them: tile/pieces.ts `piecesDrawn`).
  // With --lod none the finest zoom may draw fewer (a feature of which nothing is left on its grid): thinned there
  // too. A line shorter than one unit of the finest grid that rounds to one position there may straddle a coarser
  // zoom's rounding: drawn there, not finer. These are counts, so such a zoom reads as drawing everything, never more.
  const total = plan.layers.map((_, l) => markers[0].reduce((n, m) => n + m.offered[l], 0));
  const thinned: number[][] = [], keptFraction: number[][] = [];
  for (let z = plan.minZoom; z <= plan.maxZoom; z++) {
    thinned[z] = kept[z].map((k, l) => Math.max(0, total[l] - k));
    keptFraction[z] = kept[z].map((k, l) => (total[l] > 0 ? Math.min(1, k / total[l]) : 1));
    // A JSON-only pyramid's zoom 0 holds the overview, no tile: nothing there is drawn as a point or thinned out.
    if (z === 0 && !plan.formats.pbf) { pointified[z].fill(0); thinned[z].fill(0); }
    byZoom[z].pointified = pointified[z].reduce((a, b) => a + b, 0);
    byZoom[z].thinned = thinned[z].reduce((a, b) => a + b, 0);
  }
  return { byZoom, pointified, thinned, keptFraction, largest, jsonOnly };
}

/**
 * The preview part of a plan: the grid of the planes (a pixel no larger than a level-0 cell, so each unit paints whole
 * pixels of its own), and how far a point's disc may reach: within the records a unit reads (BUFFER + 1 tile units of a
 * cell beyond it), so that a patch shows every feature that meets it. The image is read here, onto the grid, and kept
 * in the work directory: finalize may run elsewhere, or after the image was moved or changed.
 */
export async function planPreview(enabled: boolean, image: string | undefined, plan: BuildPlan, work: WorkDir): Promise<PlanFile['preview']> {
  if (!enabled) return { enabled: false };
  const grid = previewGrid(plan.world.width, plan.world.height, PREVIEW_MAX_SIDE, tileSize(plan.world.side, plan.levels[0].zoom));
  if (image !== undefined) work.writeBytes(PREVIEW_IMAGE, [await imageBackground(image, grid)]);
  const reach = tilePad(plan.cellSize);
  return { enabled, image, grid, pointRadius: Math.max(0, Math.min(2, Math.floor(reach / grid.pixel) - 1)) };
}

/** What a level-0 unit paints: its cell's pixels of the preview grid (none outside the plane). */
export function previewPatch(planFile: PlanFile, u: UnitPlan): TileTask['preview'] {
  const { grid, pointRadius } = planFile.preview;
  if (grid === undefined || pointRadius === undefined) return undefined;
  const side = tileSize(planFile.plan.world.side, u.cell.z) / grid.pixel;
  const x = u.cell.x * side, y = u.cell.y * side;
  const width = Math.min(side, grid.width - x), height = Math.min(side, grid.height - y);
  return width > 0 && height > 0 ? { area: { x, y, width, height, pixel: grid.pixel }, pointRadius } : undefined;
}

/**
 * One PNG quicklook per plane, put together from the patches the level-0 units painted from every feature (`level0`:
 * their markers), over the image when one was given; and that image downsampled, the viewer's background.
 */
export async function writePreviews(ctx: RunContext, level0: UnitMarker[]): Promise<Asset[]> {
  const { plan, preview } = ctx.planFile;
  const grid = preview.grid;
  if (grid === undefined) return [];
  const image = preview.image === undefined ? undefined : ctx.work.readBytes(PREVIEW_IMAGE);
  if (preview.image !== undefined && image === undefined) {
    throw new WorkStateError(`${ctx.work.root ?? 'the work directory'} lacks ${PREVIEW_IMAGE}, the image ${preview.image} as plan read it for the previews: plan again`, ctx.work.root);
  }
  const assets: Asset[] = [];
  for (const plane of plan.planes) {
    const canvas = new Uint8Array(grid.width * grid.height * 4);
    for (const m of level0) {
      if (m.preview && planeKey(parseUnitKey(m.key).plane) === planeKey(plane)) placePatch(canvas, grid.width, grid.height, ctx.units.preview(m.key), m.preview);
    }
    const png = await composePreview(canvas, grid, image);
    const name = plan.dims.length ? `preview/${plan.dims.map((d) => `${d}${plane[d]}`).join('-')}.png` : 'preview/preview.png';
    await ctx.sink.write(name, png);
    const asset: Asset = { role: 'raster', href: name, media_type: 'image/png', title: `preview${plan.dims.length ? ` of ${plan.dims.map((d) => `${d}=${plane[d]}`).join(', ')}` : ''}` };
    // Foreign members: the plane a preview shows (viewers pick the one of the current plane) and the pixels it covers.
    for (const d of plan.dims) asset[d] = plane[d];
    asset.bbox = [0, 0, grid.width * grid.pixel, grid.height * grid.pixel];
    assets.push(asset);
  }
  if (image !== undefined) {
    const { jpeg } = await backgroundJpeg(image, grid);
    await ctx.sink.write('preview/image.jpg', jpeg);
    assets.push({ role: 'background', href: 'preview/image.jpg', media_type: 'image/jpeg', title: 'the slide image, downsampled', bbox: [0, 0, plan.world.width, plan.world.height] });
  }
  return assets;
}

/**
 * The QuPath objects on every channel of a pyramid with a channel axis, and its channels, each of which holds them
 * (undefined without such objects, or without a channel axis: then they are simply in the pyramid's one plane).
 */
export function everyChannel(plan: Pick<BuildPlan, 'dims' | 'planes'>, read: Pick<ReadSummary, 'everyChannel'>): { features: number; channels: number[] } | undefined {
  if (!read.everyChannel || !plan.dims.includes('c')) return undefined;
  return { features: read.everyChannel, channels: [...new Set(plan.planes.map((p) => p.c))].sort((a, b) => a - b) };
}

/** The warning that says where the objects on every channel went: in each channel's tiles, at their own t and z. */
export function everyChannelWarning(plan: Pick<BuildPlan, 'dims' | 'planes'>, read: Pick<ReadSummary, 'everyChannel'>): [string, CodedFields] | undefined {
  const e = everyChannel(plan, read);
  if (e === undefined) return undefined;
  return [
    `${e.features} QuPath object(s) are on every channel (plane c -1, or no plane: QuPath's default) while others name a channel: each is in the tiles of every channel (c ${e.channels.join(', ')}) at its own t and z, with the same id, properties and geometry`,
    { event: 'every-channel', ...e },
  ];
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
    setOwn(byLayer, id, {
      pointified: totals.pointified.map((p) => p?.[l] ?? 0), thinned: totals.thinned.map((t) => t?.[l] ?? 0),
      completeZooms: descriptor.vector_layers[l].complete_zooms as number[],
      keptFraction: (descriptor.vector_layers[l].kept_fraction ?? {}) as Record<string, number>,
    });
  });
  const sum = Object.values(totals.byZoom).reduce((a, z) => ({ tiles: a.tiles + z.tiles, bytes: a.bytes + z.bytes }), { tiles: 0, bytes: 0 });
  const r = run.read;
  return {
    features: {
      read: r.read, valid: r.valid, invalid: r.invalid,
      invalidByCode: sortedRecord(r.issues.errorsByCode), warningsByCode: sortedRecord(r.issues.warningsByCode),
      notPlaced: sortedRecord(r.skipped), notPlacedFirst: sortedRecord(r.skippedFirst ?? {}), jsonOnly: totals.jsonOnly, ...withEveryChannel(plan, r), samples: r.issues.samples,
    },
    world: {
      ...plan.world, minZoom: plan.minZoom, maxZoom: plan.maxZoom, dims: plan.dims, planes: plan.planes.length, layers: plan.layers,
      ...(plan.outliers ? { outliers: plan.outliers } : {}),
    },
    tiles: {
      total: sum.tiles, bytes: sum.bytes, byZoom: totals.byZoom, byLayer, largest: totals.largest,
      thinning: {
        budgeted: plan.formats.pbf ? 'pbf' : 'json',
        share: plan.thresholds.map((t) => 1 - (t?.[0] ?? 0) / PRIORITY_RANGE),
        thresholds: plan.thresholds.map((t) => t?.[0] ?? 0), raised: plan.raised, spareFrom: plan.spareFrom, spareSizes: plan.spareSizes,
        budget: plan.lod === 'auto' ? plan.tileBudget : null,
        ...(plan.fewFields ? { fewFields: { keep: [...plan.fewFields.keep], below: plan.fewFields.below } } : {}),
      },
    },
    units: { levels: plan.levels.length, total: run.units },
    run: { workers: ctx.config.options.workers, spilled, resumed: run.resumed, ...(ctx.planFile.forShards === true ? { shards: ctx.planFile.shards } : {}) },
    timings: run.timings,
  };
}

/** A plan's counts of the features it read, as the report of its pyramid will have them (what `plan` says it lost). */
export function plannedFeatures(r: ReadSummary): Omit<BuildReport['features'], 'jsonOnly' | 'everyChannel'> {
  return {
    read: r.read, valid: r.valid, invalid: r.invalid, invalidByCode: sortedRecord(r.issues.errorsByCode), warningsByCode: sortedRecord(r.issues.warningsByCode),
    notPlaced: sortedRecord(r.skipped), notPlacedFirst: sortedRecord(r.skippedFirst ?? {}), samples: r.issues.samples,
  };
}

function withEveryChannel(plan: BuildPlan, read: ReadSummary): Pick<BuildReport['features'], 'everyChannel'> {
  const e = everyChannel(plan, read);
  return e ? { everyChannel: e } : {};
}

function sortedRecord<T>(r: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(r).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** Why a build that read no valid feature stops: the files, the counts, and the first errors found. */
export function noValidFeature(inputs: readonly InputSpec[], read: ReadSummary): string {
  const files = inputs.length === 0 ? 'no input given' : inputs.map((i) => i.source.name).join(', ');
  const codes = Object.entries(read.issues.errorsByCode).map(([code, n]) => `${code}: ${n}`).join(', ');
  const first = read.issues.samples.filter((s) => s.severity === 'error').slice(0, 3).map((s) => `\n  ${sampleLine(s)}`).join('');
  return `${files}: no valid feature (${read.read} read${read.invalid > 0 ? `, ${read.invalid} invalid${codes ? `: ${codes}` : ''}` : ''}): nothing to build, no descriptor written${first}`;
}

/** Why a build whose valid features all lie beyond the image or have no position to place stops. */
export function nothingPlaced(inputs: readonly InputSpec[], read: ReadSummary, config: BuildConfig): string {
  // Where to look, as the summary names it: the reason alone left a user with every feature to search.
  const why = Object.entries(read.skipped).map(([code, n]) => {
    const at = read.skippedFirst?.[code];
    return `${code}: ${n}${at ? `, the first: ${skippedText(at)}` : ''}`;
  }).join('; ');
  const size = config.imageSize ? `; are their coordinates in this image's pixels (${config.imageSize.width} × ${config.imageSize.height}, --image or --image-size)?` : '';
  // Without an image the world is the data's: what lies outside it is left of or above its corner (0, 0), or very far.
  const world = !config.imageSize && read.skipped['outside-world'] ? `; outside-world: wholly left of or above the image's top-left corner (x or y below 0, where pixel coordinates start) or beyond 2^${Math.log2(MAX_WORLD_SIDE)} px` : '';
  return `${inputs.map((i) => i.source.name).join(', ')}: none of the ${read.valid} valid feature(s) can be placed (${why}): nothing to build, no descriptor written${size}${world}`;
}

/**
 * The warning for a label mask of another size than the image: its labels stay at the mask's own pixels. A mask
 * made at a downsample (QuPath's label export, a model run on a smaller copy) would cover a corner of the slide.
 */
export function maskSizeWarning(file: string, mask: { width: number; height: number }, image: { width: number; height: number }): [string, CodedFields] {
  const fx = image.width / mask.width, fy = image.height / mask.height;
  const downsample = Math.abs(fx - fy) <= 0.02 * Math.max(fx, fy) ? Number(((fx + fy) / 2).toFixed(2)) : undefined;
  const where = fx >= 1 && fy >= 1 ? `over the image's top-left ${mask.width} × ${mask.height} px` : 'those beyond the image not placed';
  const made = downsample === undefined ? '' : `; made at downsample ${downsample}? `;
  return [
    `${file}: the label mask is ${mask.width} × ${mask.height} px and the image ${image.width} × ${image.height} px (--image or --image-size): its labels are placed at the mask's own pixels, not scaled, ${where}${made || '; '}write the mask at the image's size (QuPath's label export: downsample 1)`,
    { event: 'mask-size', file, mask: [mask.width, mask.height], image: [image.width, image.height], ...(downsample === undefined ? {} : { downsample }) },
  ];
}

/**
 * Counts the features of a made source (a traced label mask) in very many polygons: one id and one hover card for
 * thousands of objects, which is seldom what a mask of 0/255 or of classes meant. With --mask-features piece no
 * feature is in more than one polygon, so none is counted.
 */
export class ManyPieces {
  private first: { id: unknown; polygons: number; vertices: number } | undefined;
  private others = 0;

  see(f: Feature | FlatValue): void {
    if (f instanceof FlatValue) {
      if (f.geom.type === 'MultiPolygon') this.add(f.feature, f.geom.polys.length, () => f.positions - f.rings);
      return;
    }
    const g = f.geometry;
    if (g?.type !== 'MultiPolygon') return;
    this.add(f, g.coordinates.length, () => {
      let vertices = 0;
      for (const p of g.coordinates) for (const r of p) vertices += r.length - 1;
      return vertices;
    });
  }

  private add(f: Feature, polygons: number, vertices: () => number): void {
    if (polygons < MANY_PIECES) return;
    if (this.first !== undefined) { this.others++; return; }
    this.first = { id: f.properties?.label ?? f.id, polygons, vertices: vertices() };
  }

  warning(file: string): [string, CodedFields] | undefined {
    const f = this.first;
    if (f === undefined) return undefined;
    const others = this.others > 0 ? `, and ${this.others} other label(s) in ${MANY_PIECES.toLocaleString('en-US')} or more` : '';
    return [
      `${file}: label ${String(f.id)} is in ${f.polygons.toLocaleString('en-US')} pieces, one feature of ${f.vertices.toLocaleString('en-US')} vertices${others}: a binary or class mask? It is one feature: one id and one hover card for all its pieces; build with --mask-features piece for a feature per piece (its label kept as a property)`,
      { event: 'mask-pieces', file, label: f.id, polygons: f.polygons, vertices: f.vertices, others: this.others },
    ];
  }
}

/** What label mode makes of a mask numbered afresh, as its warnings say it. */
const ONE_FEATURE = 'A label is one feature: one id and one hover card for all its pieces';

/** What a warning of a mask numbered afresh asks for, or says was done (`auto`): its features read as pieces. */
function afreshAdvice(asPieces: boolean): string {
  return asPieces
    ? 'It is read piece by piece (--mask-features auto): a feature per piece, its label kept as a property; --mask-features label makes each label one feature of all its pieces'
    : 'build with --mask-features piece for a feature per piece (its label kept as a property), or number each object once across the mask (scikit-image: measure.label)';
}

/** The warning of a mask whose labels lie in pieces far apart (`ScatteredLabels`); `asPieces`: read as pieces (`auto`). */
export function scatteredWarning(file: string, s: Scattered, asPieces: boolean): [string, CodedFields] {
  const n = (v: number) => v.toLocaleString('en-US');
  const f = s.first;
  const label = asPieces ? '' : ` ${ONE_FEATURE};`;
  return [
    `${file}: ${n(s.labels)} of ${n(s.of)} labels are each in pieces far apart (label ${f.label}: ${n(f.pieces)} pieces across ${n(f.width)} × ${n(f.height)} px, ${n(f.area)} px in all): was the mask segmented tile by tile and numbered afresh in each?${label} ${afreshAdvice(asPieces)}`,
    { event: 'mask-scattered', file, labels: s.labels, of: s.of, label: f.label, pieces: f.pieces, width: f.width, height: f.height, area: f.area, readAs: asPieces ? 'piece' : 'label' },
  ];
}

/**
 * The warning of a mask read in bands whose labels recur far apart (`LabelRows.recurring`), given from the first
 * pass over its rows, before the pieces are traced: each such label's outlines are held until its last row is read;
 * or, `asPieces`, at the pass's end, the mask then read by its pieces (`auto`).
 */
export function recurringWarning(file: string, r: Recurring, asPieces: boolean): [string, CodedFields] {
  const n = (v: number) => v.toLocaleString('en-US');
  const f = r.first;
  const label = asPieces ? '' : ` ${ONE_FEATURE}, each held as outlines until its last row is read (spilled beyond a tenth of --memory-budget);`;
  return [
    `${file}: labels recur far apart down the mask (label ${f.label} in rows ${n(f.top)}–${n(f.bottom)}, again from row ${n(f.again)}; ${n(r.labels)} labels${asPieces ? '' : ' so far'}): was the mask segmented tile by tile and numbered afresh in each?${label} ${afreshAdvice(asPieces)}`,
    { event: 'mask-recurring', file, labels: r.labels, label: f.label, top: f.top, bottom: f.bottom, again: f.again, readAs: asPieces ? 'piece' : 'label' },
  ];
}
