// verify: the descriptor and the zoom-0 overview descriptors, each check returning the problems it found.
import { urlTemplate } from '../tiling/space.js';
import { validateDescriptor } from '../validate/index.js';
import { issueText, shown } from '../validate/issue.js';
import type { TilesetDescriptor } from '../model/descriptor.js';
import type { TagLayer } from './verify-tiles.js';
import type { Pyramid, TileRef } from './layout.js';
import { decodeJsonBytes, isAbsoluteUrl, problem, type Problem } from './verify-problems.js';

/** The descriptor against the spec and against the layout the files are in. */
export function checkDescriptor(p: Pyramid): Problem[] {
  const out: Problem[] = [];
  const d = p.descriptor;
  for (const is of validateDescriptor(d)) {
    if (is.severity === 'error') out.push(problem('descriptor-invalid', 'tileset.json', issueText(is)));
  }
  const layout = (m: string) => out.push(problem('descriptor-layout', 'tileset.json', m));
  const template = d.tiles[0];
  if (d.format !== 'pbf' && d.format !== 'json') layout(`format must be "pbf" or "json", found ${JSON.stringify(d.format)}`);
  if (!isAbsoluteUrl(template)) {
    const want = urlTemplate(p.dims, p.format);
    if (template !== want) layout(`tiles must be ["${want}"] for this layout, found ${JSON.stringify(d.tiles)}`);
  } else if (!template.endsWith(urlTemplate(p.dims, p.format))) {
    layout(`tiles must end with ${urlTemplate(p.dims, p.format)}, found ${template}`);
  }
  const order = p.dims.map((x) => 'tcz'.indexOf(x));
  if (order.some((v, i) => i > 0 && v <= order[i - 1])) layout(`plane placeholders must come in the order t, c, z, found ${p.dims.join(', ')}`);
  const wantBounds = p.dims.length ? 10 : 4;
  if ((d.bounds ?? []).length !== wantBounds) layout(`bounds must have ${wantBounds} numbers with ${p.dims.length ? `plane dimensions ${p.dims.join(', ')}` : 'no plane dimensions'}, found ${(d.bounds ?? []).length}`);
  if (!Number.isInteger(d.minzoom) || !Number.isInteger(d.maxzoom)) layout('minzoom and maxzoom must be written explicitly');
  else if (p.minZoom > p.maxZoom) layout(`minzoom ${p.minZoom} is above maxzoom ${p.maxZoom}`);
  // Spec 2.3: optional, 2 when absent; this layout's zoom arithmetic needs 2.
  if (d.scale_factor !== undefined && d.scale_factor !== 2) layout(`scale_factor must be 2 (or absent, meaning 2), found ${JSON.stringify(d.scale_factor)}`);
  return out;
}

/** A zoom-0 overview: a JSON descriptor whose tile URLs lead back to the JSON tiles. */
export function checkOverview(p: Pyramid, t: TileRef, bytes: Uint8Array): Problem[] {
  const out: Problem[] = [];
  let doc: unknown;
  try {
    doc = decodeJsonBytes(bytes);
  } catch (err) {
    return [problem('tile-undecodable', t.path, `overview is not JSON: ${(err as Error).message}`)];
  }
  const issues = validateDescriptor(doc).filter((i) => i.severity === 'error');
  for (const is of issues) out.push(problem('overview-invalid', t.path, issueText(is)));
  if (doc === null || typeof doc !== 'object') return out;
  const d = doc as { format?: unknown; tiles?: unknown };
  if (d.format !== 'json') out.push(problem('overview-invalid', t.path, `the zoom-0 JSON file must be a descriptor with format "json", found format ${JSON.stringify(d.format)}`));
  const tiles = Array.isArray(d.tiles) ? d.tiles : [];
  const first = tiles[0];
  if (typeof first === 'string' && !isAbsoluteUrl(first)) {
    const want = '../'.repeat(t.path.split('/').length - 1) + urlTemplate(p.dims, 'json');
    if (first !== want) out.push(problem('overview-invalid', t.path, `tiles must be ["${want}"] (relative to the overview), found ${JSON.stringify(tiles)}`));
  }
  return out;
}

/** JSON text of a value with its objects' members in one order: equal for equal values, however they are written. */
function canonical(v: unknown): string {
  return JSON.stringify(v, (_, x: unknown) => (x !== null && typeof x === 'object' && !Array.isArray(x)
    ? Object.fromEntries(Object.entries(x as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    : x));
}

const said = (v: unknown): string => (v === undefined ? 'absent' : shown(v));

/**
 * Members an overview holds for its own plane's JSON pyramid: compared apart (or by checkOverview), not as equal.
 * Assets are not compared: a background image added to tileset.json by hand, for viewers, is no fault of the overviews.
 */
const OWN_MEMBERS = new Set(['tiles', 'format', 'bounds', 'center', 'assets']);

/** How the overview's `vector_layers` differ from tileset.json's: the layer ids, else the first member of a layer. */
function layersDifference(here: unknown, there: unknown): string {
  const ids = (v: unknown) => (Array.isArray(v) ? v.map((l: { id?: unknown } | null) => l?.id) : v);
  if (canonical(ids(here)) !== canonical(ids(there))) return `vector_layers: layers ${said(ids(here))} here, ${said(ids(there))} in tileset.json`;
  const a = here as Record<string, unknown>[], b = there as Record<string, unknown>[];
  for (let i = 0; i < a.length; i++) {
    if (canonical(a[i]) === canonical(b[i])) continue;
    const members = [...new Set([...Object.keys(a[i] ?? {}), ...Object.keys(b[i] ?? {})])];
    const k = members.find((m) => canonical(a[i]?.[m]) !== canonical(b[i]?.[m]));
    if (k !== undefined) return `vector_layers: layer ${said(a[i]?.id)} ${k}: ${said(a[i]?.[k])} here, ${said(b[i]?.[k])} in tileset.json`;
  }
  return `vector_layers: ${said(here)} here, ${said(there)} in tileset.json`;
}

/**
 * How an overview differs from tileset.json, each difference as text: an overview is the descriptor of its plane's
 * JSON pyramid, so all but its tiles, format, plane in bounds and center, and assets are tileset.json's. Plane-free wording, so that one edit of tileset.json reads the same for every plane.
 */
function overviewDifferences(p: Pyramid, t: TileRef, doc: Record<string, unknown>): string[] {
  const main = p.descriptor as Record<string, unknown>;
  const out: string[] = [];
  // Spec 2.3: scale_factor absent means 2 (a descriptor without it is sound: checkDescriptor).
  const member = (d: Record<string, unknown>, k: string) => (k === 'scale_factor' && d[k] === undefined ? 2 : d[k]);
  for (const k of new Set([...Object.keys(main), ...Object.keys(doc)])) {
    if (OWN_MEMBERS.has(k) || canonical(member(doc, k)) === canonical(member(main, k))) continue;
    out.push(k === 'vector_layers' ? layersDifference(doc[k], main[k]) : `${k}: ${said(doc[k])} here, ${said(main[k])} in tileset.json`);
  }
  const planed = p.dims.length > 0;
  const at = [t.plane.t, t.plane.c, t.plane.z];
  // Bounds: tileset.json's extent in x and y; with planes, this overview's plane alone.
  const b = doc.bounds;
  const xy = Array.isArray(b) ? (b.length === 10 ? [b[3], b[4], b[8], b[9]] : b) : b;
  if (canonical(xy) !== canonical(p.box)) out.push(`bounds: x and y ${said(xy)} here, ${said(p.box)} in tileset.json`);
  if (planed && Array.isArray(b) && b.length === 10 && (canonical(b.slice(0, 3)) !== canonical(at) || canonical(b.slice(5, 8)) !== canonical(at))) {
    out.push(`bounds: planes ${said(b.slice(0, 3))}–${said(b.slice(5, 8))} (t, c, z) here, where the overview at this path is plane ${said(at)} alone`);
  }
  // Center: tileset.json's x, y and zoom; with planes, this overview's plane first.
  const c = doc.center, mc = main.center;
  const tail = (v: unknown) => (Array.isArray(v) && planed && v.length === 6 ? v.slice(3) : v);
  if (canonical(tail(c)) !== canonical(tail(mc))) out.push(`center: ${planed ? 'x, y and zoom ' : ''}${said(tail(c))} here, ${said(tail(mc))} in tileset.json`);
  if (planed && Array.isArray(c) && c.length === 6 && canonical(c.slice(0, 3)) !== canonical(at)) {
    out.push(`center: plane ${said(c.slice(0, 3))} (t, c, z) here, where the overview at this path is plane ${said(at)}`);
  }
  // An absolute template (--base-url) is tileset.json's base with the JSON template; a relative one checkOverview holds.
  const first = Array.isArray(doc.tiles) ? (doc.tiles as unknown[])[0] : undefined;
  const own = urlTemplate(p.dims, p.format), mainFirst = p.descriptor.tiles[0];
  if (typeof first === 'string' && isAbsoluteUrl(first) && isAbsoluteUrl(mainFirst) && mainFirst.endsWith(own)) {
    const want = mainFirst.slice(0, -own.length) + urlTemplate(p.dims, 'json');
    if (first !== want) out.push(`tiles: ${said(doc.tiles)} here, ["${want}"] from tileset.json's ${said(p.descriptor.tiles)}`);
  }
  return out;
}

/**
 * The overviews against tileset.json. A difference is said once, at the first overview that has it, with how many
 * others share it: an edited tileset.json differs from every plane's overview alike.
 */
export class OverviewMatch {
  private readonly found = new Map<string, { path: string; n: number }>();

  constructor(private readonly p: Pyramid) {}

  add(t: TileRef, bytes: Uint8Array): void {
    let doc: unknown;
    try {
      doc = decodeJsonBytes(bytes);
    } catch {
      return; // checkOverview names it
    }
    if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return;
    for (const d of overviewDifferences(this.p, t, doc as Record<string, unknown>)) {
      const seen = this.found.get(d);
      if (seen) seen.n++;
      else this.found.set(d, { path: t.path, n: 1 });
    }
  }

  problems(): Problem[] {
    return [...this.found].map(([d, { path, n }]) => problem('overview-invalid', path, n > 1 ? `${d} (the same in ${n - 1} other overview(s))` : d));
  }
}

/**
 * The tiles' PBF tags (a pyramid without PBF tiles: those its JSON tiles' features make) held against the descriptor's
 * layers: a field no layer declares, a value its `fieldenums` do not list or outside its `fieldranges` (a viewer's
 * legend and colours are built from them), a field in a tile coarser than the zoom its `field_minzoom` says it starts
 * at (`--coarse-fields`). Each is said once, at the first tile.
 */
export class FieldCheck {
  private readonly said = new Set<string>();
  private readonly layers = new Map<string, { fields: Record<string, unknown>; enums: Map<string, Set<string>>; ranges: Map<string, [number, number]>; from: Map<string, number> }>();

  constructor(descriptor: TilesetDescriptor) {
    for (const l of Array.isArray(descriptor.vector_layers) ? descriptor.vector_layers : []) {
      const enums = new Map(Object.entries(l.fieldenums ?? {}).filter(([, v]) => Array.isArray(v)).map(([k, v]) => [k, new Set(v)]));
      const ranges = new Map<string, [number, number]>();
      for (const [k, r] of Object.entries(l.fieldranges ?? {})) {
        if (Array.isArray(r) && typeof r[0] === 'number' && typeof r[1] === 'number') ranges.set(k, [r[0], r[1]]);
      }
      const later = l.field_minzoom;
      const from = new Map(later !== null && typeof later === 'object' ? Object.entries(later).filter(([, z]) => typeof z === 'number') as [string, number][] : []);
      this.layers.set(l.id, { fields: l.fields ?? {}, enums, ranges, from });
    }
  }

  check(path: string, layers: readonly TagLayer[], z: number): Problem[] {
    const out: Problem[] = [];
    const once = (key: string, message: string) => {
      if (this.said.has(key)) return;
      this.said.add(key);
      out.push(problem('field-mismatch', path, message));
    };
    for (const l of layers) {
      // A layer the descriptor lacks is said as such (unknown-layer).
      const declared = this.layers.get(l.name);
      if (declared === undefined) continue;
      for (const f of l.features) {
        for (const [k, v] of Object.entries(f.tags)) {
          if (!Object.hasOwn(declared.fields, k)) once(`${l.name}\0${k}`, `layer ${l.name}: field ${JSON.stringify(k)} is in the tiles, not among the descriptor's fields`);
          else if ((declared.from.get(k) ?? 0) > z) once(`${l.name}\0${k}\0from`, `layer ${l.name}: field ${JSON.stringify(k)} is in a tile of zoom ${z}, where its field_minzoom says tiles carry it from zoom ${declared.from.get(k)}`);
          else if (typeof v === 'string' && declared.enums.get(k)?.has(v) === false) once(`${l.name}\0${k}\0${v}`, `layer ${l.name}: value ${JSON.stringify(v)} of field ${JSON.stringify(k)} is in the tiles, not among its fieldenums`);
          else if (typeof v === 'number') {
            const r = declared.ranges.get(k);
            if (r && (v < r[0] || v > r[1])) once(`${l.name}\0${k}\0range`, `layer ${l.name}: value ${v} of field ${JSON.stringify(k)} is in the tiles, outside its fieldranges [${r[0]}, ${r[1]}]`);
          }
        }
      }
    }
    return out;
  }
}

