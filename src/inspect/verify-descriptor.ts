// verify: the descriptor and the zoom-0 overview descriptors, each check returning the problems it found.
import { urlTemplate } from '../tiling/space.js';
import { validateDescriptor } from '../validate/index.js';
import { shownPath } from '../validate/issue.js';
import type { TilesetDescriptor } from '../model/descriptor.js';
import type { PbfLayer } from './decode.js';
import type { Pyramid, TileRef } from './layout.js';
import { decodeJsonBytes, isAbsoluteUrl, problem, type Problem } from './verify-problems.js';

/** The descriptor against the spec and against the layout the files are in. */
export function checkDescriptor(p: Pyramid): Problem[] {
  const out: Problem[] = [];
  const d = p.descriptor;
  for (const is of validateDescriptor(d)) {
    if (is.severity === 'error') out.push(problem('descriptor-invalid', 'tileset.json', `${shownPath(is.path)}: ${is.message} [${is.code}]`));
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
  for (const is of issues) out.push(problem('overview-invalid', t.path, `${shownPath(is.path)}: ${is.message} [${is.code}]`));
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

/**
 * The tiles' PBF tags held against the descriptor's layers: a field no layer declares, a value its `fieldenums` do not
 * list or outside its `fieldranges` (a viewer's legend and colours are built from them). Each is said once, at the
 * first tile.
 */
export class FieldCheck {
  private readonly said = new Set<string>();
  private readonly layers = new Map<string, { fields: Record<string, unknown>; enums: Map<string, Set<string>>; ranges: Map<string, [number, number]> }>();

  constructor(descriptor: TilesetDescriptor) {
    for (const l of Array.isArray(descriptor.vector_layers) ? descriptor.vector_layers : []) {
      const enums = new Map(Object.entries(l.fieldenums ?? {}).filter(([, v]) => Array.isArray(v)).map(([k, v]) => [k, new Set(v)]));
      const ranges = new Map<string, [number, number]>();
      for (const [k, r] of Object.entries(l.fieldranges ?? {})) {
        if (Array.isArray(r) && typeof r[0] === 'number' && typeof r[1] === 'number') ranges.set(k, [r[0], r[1]]);
      }
      this.layers.set(l.id, { fields: l.fields ?? {}, enums, ranges });
    }
  }

  check(path: string, layers: readonly PbfLayer[]): Problem[] {
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

