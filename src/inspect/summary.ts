// `inspect`: what a pyramid holds — zooms, planes, layers and fields, tiles, bytes and features per zoom, the largest tiles.
import { own } from '../model/own.js';
import type { Asset, FieldType } from '../model/descriptor.js';
import { pixelOf } from '../model/multiscale.js';
import { planeKey, type Dim, type Plane } from '../tiling/space.js';
import { countPbfFeatures } from './decode.js';
import { isOverview, listTiles, openPyramid, readJson, type Pyramid, type TileFormat } from './layout.js';
import type { ArchiveFacts, PyramidReader } from './reader.js';
import type { Problem } from './verify-problems.js';
import { InputError, UsageError } from '../report/errors.js';
import { refuseUnknown, shown } from '../options.js';

export interface FieldSummary {
  name: string;
  type: FieldType | string;
  /** [min, max] of a Number field. */
  range?: Array<number | string>;
  /** Distinct values of a String field, when the descriptor lists them. */
  values?: string[];
  description?: string;
}

export interface LayerSummary {
  id: string;
  minzoom?: number;
  maxzoom?: number;
  fields: FieldSummary[];
  /** Zooms at which the layer holds every feature at full form (descriptor member `complete_zooms`). */
  completeZooms?: number[];
  /** Share of the layer's features each thinned zoom draws (descriptor member `kept_fraction`). */
  keptFraction?: Record<string, number>;
  /** Whose numbers the layer's PBF feature ids are (descriptor member `feature_ids`: input, sequence or mixed). */
  featureIds?: string;
  /** Fields tiles carry only from a zoom on (descriptor member `field_minzoom`, `--coarse-fields`). */
  fieldMinzoom?: Record<string, number>;
}

export interface FormatCount { tiles: number; bytes: number }

export interface ZoomSummary {
  zoom: number;
  json: FormatCount;
  pbf: FormatCount;
  /** Features over the zoom's tiles (a feature crossing tiles counts once per tile), from PBF tiles when there are any, else JSON. */
  features: number;
}

export interface PyramidSummary {
  root: string;
  tilejson: string;
  /** Format `tileset.json` describes, and the formats found on disk. */
  format: TileFormat;
  formats: TileFormat[];
  tiles: string[];
  name?: string;
  description?: string;
  version?: string;
  world: { side: number; width: number; height: number };
  /** What one pixel is along x and y, from the descriptor's `multiscale` (its axes' units and scale), when it says. */
  pixel?: { x: number; y: number; unitX: string; unitY: string };
  zooms: { min: number; max: number; present: number[] };
  dims: Dim[];
  planes: Plane[];
  layers: LayerSummary[];
  byZoom: ZoomSummary[];
  totals: { tiles: number; bytes: number; features: number };
  /** Overview descriptors (zoom-0 JSON file of each plane): not counted as tiles. */
  overviews: number;
  featuresFrom: TileFormat;
  largest: { path: string; bytes: number }[];
  assets: Asset[];
  /** From build-report.json, when present. */
  build?: { read?: number; valid?: number; invalid?: number; seconds?: number };
  /** Tiles that could not be read (an archive's tile whose gzip does not decode) or decoded, when there are any. */
  unreadable?: { path: string; message: string }[];
  /** What the reader found wrong with the archives (verify's `archive-invalid` and the like), when anything. */
  problems?: Problem[];
  /** The archive files read (byte counts elsewhere are of the tiles as decoded), when the pyramid is in archives. */
  archives?: ArchiveFacts[];
}

export interface InspectOptions {
  /** How many of the largest tiles to list (default 10). */
  top?: number;
}

function layerSummaries(p: Pyramid): LayerSummary[] {
  const layers = Array.isArray(p.descriptor.vector_layers) ? p.descriptor.vector_layers : [];
  return layers.map((l) => {
    const fields: FieldSummary[] = Object.entries(l.fields ?? {}).map(([name, type]) => {
      const f: FieldSummary = { name, type };
      // Field names are data: `toString` or `__proto__` is no member of `{}` here.
      const range = l.fieldranges && own(l.fieldranges, name);
      if (range) f.range = range;
      const values = l.fieldenums && own(l.fieldenums, name);
      if (values) f.values = values;
      const description = l.fielddescriptions && own(l.fielddescriptions, name);
      if (description) f.description = description;
      return f;
    });
    const s: LayerSummary = { id: l.id, fields };
    if (l.minzoom !== undefined) s.minzoom = l.minzoom;
    if (l.maxzoom !== undefined) s.maxzoom = l.maxzoom;
    if (Array.isArray(l.complete_zooms)) s.completeZooms = l.complete_zooms as number[];
    if (l.kept_fraction !== null && typeof l.kept_fraction === 'object') s.keptFraction = l.kept_fraction as Record<string, number>;
    if (typeof l.feature_ids === 'string') s.featureIds = l.feature_ids;
    if (l.field_minzoom !== null && typeof l.field_minzoom === 'object') s.fieldMinzoom = l.field_minzoom as Record<string, number>;
    return s;
  });
}

function buildInfo(p: Pyramid): PyramidSummary['build'] {
  let report: unknown;
  try {
    report = readJson(p.reader, 'build-report.json');
  } catch {
    return undefined;
  }
  if (report === null || typeof report !== 'object') return undefined;
  const r = report as { features?: { read?: unknown; valid?: unknown; invalid?: unknown }; timings?: { total?: unknown } };
  const num = (v: unknown) => (typeof v === 'number' ? v : undefined);
  return { read: num(r.features?.read), valid: num(r.features?.valid), invalid: num(r.features?.invalid), seconds: num(r.timings?.total) };
}

/** Walks every tile of a pyramid once (PBF features are counted without decoding geometry). */
export function inspectPyramid(root: string | PyramidReader, given: InspectOptions | null = {}): PyramidSummary {
  const opts = given ?? {};
  refuseUnknown(opts, ['top']);
  const top = opts.top ?? 10;
  if (!Number.isInteger(top) || top < 0) throw new UsageError(`top must be a whole number of at least 0, found ${shown(top)}`);
  const p = openPyramid(root);
  const zooms = new Map<number, ZoomSummary>();
  const planes = new Map<string, Plane>();
  const largest: { path: string; bytes: number }[] = [];
  const found = new Set<TileFormat>();
  let overviews = 0;
  // tileset.json describes the PBF pyramid whenever PBF tiles were built.
  const featuresFrom: TileFormat = p.format;
  const unreadable: { path: string; message: string }[] = [];
  for (const t of listTiles(p)) {
    let bytes: Uint8Array | undefined;
    try {
      bytes = p.reader.read(t.path);
    } catch (err) {
      if (!(err instanceof InputError)) throw err;
      unreadable.push({ path: t.path, message: `${err.message}: not counted` });
      continue;
    }
    if (bytes === undefined) continue;
    planes.set(planeKey(t.plane), t.plane);
    found.add(t.ext);
    if (isOverview(t)) { overviews++; continue; }
    let zs = zooms.get(t.z);
    if (!zs) { zs = { zoom: t.z, json: { tiles: 0, bytes: 0 }, pbf: { tiles: 0, bytes: 0 }, features: 0 }; zooms.set(t.z, zs); }
    zs[t.ext].tiles++;
    zs[t.ext].bytes += bytes.length;
    if (t.ext === featuresFrom) {
      try {
        if (t.ext === 'pbf') zs.features += countPbfFeatures(bytes);
        else {
          const doc = JSON.parse(new TextDecoder().decode(bytes)) as { features?: unknown };
          if (Array.isArray(doc.features)) zs.features += doc.features.length;
        }
      } catch (err) {
        // A tile that does not decode still counts in tiles and bytes, but its features are not known: said.
        unreadable.push({ path: t.path, message: `does not decode as a ${t.ext === 'pbf' ? 'PBF' : 'JSON'} tile (${err instanceof Error ? err.message : String(err)}): its features are not counted` });
      }
    }
    // Keeps the `top` largest, biggest first, ties by path, without sorting every tile.
    if (top > 0 && (largest.length < top || bytes.length > largest[largest.length - 1].bytes)) {
      largest.push({ path: t.path, bytes: bytes.length });
      largest.sort((a, b) => b.bytes - a.bytes || (a.path < b.path ? -1 : 1));
      if (largest.length > top) largest.pop();
    }
  }
  const byZoom = [...zooms.values()].sort((a, b) => a.zoom - b.zoom);
  const totals = byZoom.reduce((a, z) => ({
    tiles: a.tiles + z.json.tiles + z.pbf.tiles, bytes: a.bytes + z.json.bytes + z.pbf.bytes, features: a.features + z.features,
  }), { tiles: 0, bytes: 0, features: 0 });
  const d = p.descriptor;
  const summary: PyramidSummary = {
    root: p.reader.name,
    tilejson: String(d.tilejson),
    format: p.format,
    formats: (['pbf', 'json'] as const).filter((f) => found.has(f)),
    tiles: d.tiles,
    world: { side: p.side, width: p.width, height: p.height },
    zooms: { min: p.minZoom, max: p.maxZoom, present: byZoom.map((z) => z.zoom) },
    dims: p.dims,
    planes: [...planes.values()].sort((a, b) => a.t - b.t || a.c - b.c || a.z - b.z),
    layers: layerSummaries(p),
    byZoom,
    totals,
    overviews,
    featuresFrom,
    largest,
    assets: Array.isArray(d.assets) ? d.assets : [],
  };
  const pixel = pixelOf(d.multiscale);
  if (pixel) summary.pixel = pixel;
  if (typeof d.name === 'string') summary.name = d.name;
  if (typeof d.description === 'string') summary.description = d.description;
  if (typeof d.version === 'string') summary.version = d.version;
  const build = buildInfo(p);
  if (build) summary.build = build;
  if (unreadable.length > 0) summary.unreadable = unreadable;
  // A damaged archive hides tiles: a workflow reading --json sees that the summary may be short of them.
  if (p.reader.problems?.length) summary.problems = [...p.reader.problems];
  if (p.reader.archives && p.reader.archives.length > 0) summary.archives = [...p.reader.archives];
  return summary;
}

function bytesText(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024, i = 0;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
}

function rangeText(values: number[]): string {
  if (values.length === 0) return 'none';
  const lo = Math.min(...values), hi = Math.max(...values);
  return lo === hi ? String(lo) : `${lo}–${hi}`;
}

function table(rows: string[][], rightAligned: ReadonlySet<number>): string[] {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((c, i) => (rightAligned.has(i) ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join('  ').trimEnd());
}

/**
 * A layer name, field name or value as the summary prints it: quoted as JSON when it is empty, holds a control
 * character, or holds what the list around it uses (`, ` and braces). Printed raw, a NUL or a line end in a value
 * reached the terminal as it was, and an empty string read as an empty list.
 */
function listed(text: string): string {
  let plain = text !== '' && !text.includes(', ');
  for (let i = 0; plain && i < text.length; i++) {
    const c = text.charCodeAt(i);
    plain = c >= 0x20 && (c < 0x7f || c > 0x9f) && c !== 0x7b && c !== 0x7d;
  }
  // JSON leaves C1 controls as they are, and a terminal may act on one (0x9b starts a command).
  return plain ? text : JSON.stringify(text).replace(/[\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** The summary as text for a terminal. */
export function formatSummary(s: PyramidSummary): string {
  const lines: string[] = [];
  lines.push(`pyramid ${s.root}${s.name ? ` — ${s.name}` : ''}`);
  lines.push(`  descriptor  TileJSON ${s.tilejson}, ${s.format} tiles ${s.tiles.join(' ')}; formats on disk: ${s.formats.join(', ') || 'none'}`);
  lines.push(`  world       ${s.world.width} × ${s.world.height} px in a ${s.world.side} px square`);
  if (s.pixel) {
    const p = s.pixel;
    lines.push(`  pixel       ${p.unitX === p.unitY ? `${p.x} × ${p.y} ${p.unitX}` : `${p.x} ${p.unitX} × ${p.y} ${p.unitY}`} (multiscale)`);
  }
  lines.push(`  zooms       ${s.zooms.min}–${s.zooms.max}${s.zooms.present.length ? ` (tiles at ${rangeText(s.zooms.present)})` : ' (no tiles)'}`);
  if (s.dims.length) {
    const ranges = s.dims.map((d) => `${d} ${rangeText(s.planes.map((p) => p[d]))}`).join(', ');
    lines.push(`  planes      ${s.planes.length} (${ranges})`);
  } else {
    lines.push('  planes      2D');
  }
  if (s.build) {
    const b = s.build;
    lines.push(`  build       ${b.read ?? '?'} features read, ${b.valid ?? '?'} valid, ${b.invalid ?? '?'} invalid${b.seconds !== undefined ? `, ${b.seconds.toFixed(1)} s` : ''}`);
  }
  for (const a of s.archives ?? []) lines.push(`  archive     ${a.path}: PMTiles v3, ${bytesText(a.bytes)}, tiles ${a.tileCompression === 'gzip' ? 'gzipped (sizes below as decoded)' : 'stored as encoded'}`);
  for (const a of s.assets) lines.push(`  asset       ${a.role}: ${a.href}${a.title ? ` (${a.title})` : ''}`);
  lines.push('');
  lines.push('layers');
  if (s.layers.length === 0) lines.push('  (none)');
  for (const l of s.layers) {
    const complete = l.completeZooms ? `, complete at ${l.completeZooms.length ? l.completeZooms.join(',') : 'no zoom'}` : '';
    const kept = Object.entries(l.keptFraction ?? {}).map(([z, f]) => `${z}: ${shareText(f)}`).join(', ');
    const ids = l.featureIds === undefined ? '' : `; PBF ids ${idsText(l.featureIds)}`;
    lines.push(`  ${listed(l.id)}  zooms ${l.minzoom ?? '?'}–${l.maxzoom ?? '?'}${complete}${kept ? `; thinned, share drawn at zoom ${kept}` : ''}${ids}`);
    for (const f of l.fields) {
      let extra = '';
      if (f.range) extra = ` [${f.range.join(', ')}]`;
      else if (f.values) extra = ` {${f.values.slice(0, 8).map(listed).join(', ')}${f.values.length > 8 ? `, … ${f.values.length} values` : ''}}`;
      const from = l.fieldMinzoom && own(l.fieldMinzoom, f.name);
      lines.push(`    ${listed(f.name)}: ${f.type}${extra}${typeof from === 'number' ? ` (from zoom ${from})` : ''}`);
    }
  }
  lines.push('');
  const rows = [['zoom', 'pbf tiles', 'pbf bytes', 'json tiles', 'json bytes', `features (${s.featuresFrom})`]];
  for (const z of s.byZoom) {
    rows.push([String(z.zoom), String(z.pbf.tiles), bytesText(z.pbf.bytes), String(z.json.tiles), bytesText(z.json.bytes), String(z.features)]);
  }
  const sum = s.byZoom.reduce((a, z) => ({ pt: a.pt + z.pbf.tiles, pb: a.pb + z.pbf.bytes, jt: a.jt + z.json.tiles, jb: a.jb + z.json.bytes }), { pt: 0, pb: 0, jt: 0, jb: 0 });
  rows.push(['all', String(sum.pt), bytesText(sum.pb), String(sum.jt), bytesText(sum.jb), String(s.totals.features)]);
  lines.push(...table(rows, new Set([1, 2, 3, 4, 5])));
  if (s.overviews) lines.push(`  (+ ${s.overviews} overview descriptor${s.overviews > 1 ? 's' : ''} at zoom 0, not counted)`);
  lines.push('');
  lines.push(`largest tiles`);
  if (s.largest.length === 0) lines.push('  (none)');
  for (const t of s.largest) lines.push(`  ${bytesText(t.bytes).padStart(9)}  ${t.path}`);
  return `${lines.join('\n')}\n`;
}

/** Whose numbers a layer's PBF ids are, in words; a value of none of the three (a hand-edited descriptor) as written. */
function idsText(from: string): string {
  if (from === 'input') return "the input's (a string id: property id)";
  if (from === 'sequence') return "the build's sequence numbers";
  if (from === 'mixed') return "the input's, else the build's sequence numbers";
  return JSON.stringify(from);
}

/** A share as a percentage with the digits it needs (4%, 0.35%). */
function shareText(f: number): string {
  return `${Number((f * 100).toPrecision(2))}%`;
}
