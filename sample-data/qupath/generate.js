// Writes the QuPath-shaped samples of this folder (0.4+ FeatureCollection, 0.2-style bare array, bare-array patches), deterministically.
//
// Usage: node sample-data/qupath/generate.js [--out DIR]   (default: this folder; after npm run build)
//
// The shapes follow what QuPath's GeoJSON export writes (see README.md here); the objects are made up: cells in a
// few clusters, their nuclei, two hand-drawn-looking annotations and some detections, from a fixed seed.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { mulberry32 as rng } from '../../dist/random.js';

const HERE = dirname(fileURLToPath(import.meta.url));

const round = (v, d = 1) => Math.round(v * 10 ** d) / 10 ** d;

/** A QuPath-like object id (a version 4 UUID's shape), from the generator. */
function uuid(r) {
  const hex = (n) => Array.from({ length: n }, () => Math.floor(r() * 16).toString(16)).join('');
  return `${hex(8)}-${hex(4)}-4${hex(3)}-${'89ab'[Math.floor(r() * 4)]}${hex(3)}-${hex(12)}`;
}

/** A closed star-shaped ring around (cx, cy): `n` vertices at radii within ±jitter of `radius`. */
function blob(r, cx, cy, radius, n, jitter = 0.25) {
  const ring = [];
  const phase = r() * Math.PI * 2;
  for (let i = 0; i < n; i++) {
    const a = phase + (i / n) * Math.PI * 2;
    const rr = radius * (1 - jitter + 2 * jitter * r());
    ring.push([round(cx + rr * Math.cos(a)), round(cy + rr * Math.sin(a))]);
  }
  ring.push(ring[0]);
  return ring;
}

/** Shoelace area of a closed ring. */
function area(ring) {
  let s = 0;
  for (let i = 0; i + 1 < ring.length; i++) s += ring[i][0] * ring[i + 1][1] - ring[i + 1][0] * ring[i][1];
  return Math.abs(s) / 2;
}

// Classes as QuPath 0.4+ writes them: one name, or the names of a derived class; colours as [r, g, b].
const TUMOR = { name: 'Tumor', color: [200, 0, 0] };
const TUMOR_POSITIVE = { names: ['Tumor', 'Positive'], color: [220, 60, 40] };
const TUMOR_NEGATIVE = { names: ['Tumor', 'Negative'], color: [110, 110, 220] };
const STROMA = { name: 'Stroma', color: [150, 200, 150] };
const IMMUNE = { name: 'Immune cells', color: [160, 90, 160] };
const NECROSIS = { name: 'Necrosis', color: [50, 50, 50] };

const PIXEL_MICRONS = 0.25;

/** Cell measurements as QuPath names them (an object since 0.4); one in 40 cells has a non-finite circularity. */
function cellMeasurements(r, cell, nucleus, i) {
  const cellArea = round(area(cell) * PIXEL_MICRONS ** 2, 2);
  const nucleusArea = round(area(nucleus) * PIXEL_MICRONS ** 2, 2);
  return {
    'Nucleus: Area': nucleusArea,
    'Nucleus: Hematoxylin OD mean': round(0.2 + r() * 0.4, 4),
    'Nucleus: DAB OD mean': round(r() * 0.6, 4),
    'Nucleus: Circularity': i % 40 === 7 ? 'NaN' : round(0.6 + r() * 0.4, 4),
    'Cell: Area': cellArea,
    'Cell: DAB OD mean': round(r() * 0.5, 4),
    'Nucleus/Cell area ratio': round(nucleusArea / cellArea, 4),
  };
}

/** Cells in clusters: tumour nests (positive and negative), stroma, immune aggregates, and a few unclassified. */
function makeCells(r, origin, count) {
  const clusters = [
    { cx: 300, cy: 260, spread: 170, pick: () => (r() < 0.55 ? TUMOR_POSITIVE : TUMOR_NEGATIVE) },
    { cx: 760, cy: 420, spread: 150, pick: () => STROMA },
    { cx: 520, cy: 620, spread: 110, pick: () => (r() < 0.9 ? IMMUNE : undefined) },
    { cx: 880, cy: 150, spread: 120, pick: () => (r() < 0.7 ? TUMOR : undefined) },
  ];
  const cells = [];
  for (let i = 0; i < count; i++) {
    const k = clusters[i % clusters.length];
    const a = r() * Math.PI * 2, d = Math.sqrt(r()) * k.spread;
    const cx = origin[0] + k.cx + d * Math.cos(a), cy = origin[1] + k.cy + d * Math.sin(a);
    const radius = 9 + r() * 6;
    const cell = blob(r, cx, cy, radius, 14 + Math.floor(r() * 10));
    const nucleus = blob(r, cx + (r() - 0.5) * 3, cy + (r() - 0.5) * 3, radius * (0.45 + r() * 0.15), 10, 0.12);
    cells.push({ id: uuid(r), cell, nucleus, cls: k.pick(), measurements: cellMeasurements(r, cell, nucleus, i) });
  }
  return cells;
}

const polygon = (ring) => ({ type: 'Polygon', coordinates: [ring] });

/** A 0.4+ feature: type, id, geometry (and nucleusGeometry for cells), then properties with objectType first. */
function modernFeature(id, geometry, props, nucleus) {
  const f = { type: 'Feature', id, geometry };
  if (nucleus) f.nucleusGeometry = nucleus;
  f.properties = props;
  return f;
}

function modernExport(r) {
  const origin = [1200, 800];
  const features = [];
  const tumorRegion = blob(r, origin[0] + 330, origin[1] + 280, 260, 40, 0.08);
  const necrosis = blob(r, origin[0] + 650, origin[1] + 180, 70, 24, 0.2);
  features.push(modernFeature(uuid(r), polygon(tumorRegion), { objectType: 'annotation', name: 'Tumour region', classification: TUMOR, isLocked: true }));
  features.push(modernFeature(uuid(r), polygon(necrosis), { objectType: 'annotation', classification: NECROSIS, measurements: { 'Area µm^2': round(area(necrosis) * PIXEL_MICRONS ** 2, 2) } }));
  features.push(modernFeature(uuid(r), { type: 'LineString', coordinates: [[origin[0] + 60, origin[1] + 700], [origin[0] + 400, origin[1] + 760]] }, { objectType: 'annotation', name: 'Scale check', color: [255, 200, 0] }));
  for (const c of makeCells(r, origin, 120)) {
    const props = { objectType: 'cell' };
    if (c.cls) props.classification = c.cls;
    props.measurements = c.measurements;
    features.push(modernFeature(c.id, polygon(c.cell), props, polygon(c.nucleus)));
  }
  // Detections without a nucleus (what a pixel classifier or a plain detection command leaves).
  for (let i = 0; i < 16; i++) {
    const cx = origin[0] + 80 + r() * 900, cy = origin[1] + 640 + r() * 180;
    const ring = blob(r, cx, cy, 5 + r() * 4, 8, 0.2);
    features.push(modernFeature(uuid(r), polygon(ring), {
      objectType: 'detection', classification: IMMUNE,
      measurements: { Area: round(area(ring) * PIXEL_MICRONS ** 2, 2), 'DAB: Mean': round(r() * 0.4, 4) },
    }));
  }
  return { type: 'FeatureCollection', features };
}

/** A packed ARGB colour as Java's int (QuPath 0.2's `colorRGB`): opaque, so negative. */
const packed = ([red, green, blue]) => ((255 << 24) | (red << 16) | (green << 8) | blue) | 0;

/** A class as QuPath 0.2 serialised it: `{name, colorRGB}`, a derived class through `parentClass`. */
function legacyClass(c) {
  if (c.names) {
    const parent = { name: c.names[0], colorRGB: packed(TUMOR.color) };
    return { parentClass: parent, name: c.names[c.names.length - 1], colorRGB: packed(c.color) };
  }
  return { name: c.name, colorRGB: packed(c.color) };
}

/** 0.2-style: a bare array; the type as the id (0.2) or as `object_type` (0.3); measurements as {name, value}. */
function legacyExport(r) {
  const origin = [200, 150];
  const out = [];
  const region = blob(r, origin[0] + 330, origin[1] + 280, 250, 32, 0.08);
  out.push({ type: 'Feature', id: 'PathAnnotationObject', geometry: polygon(region), properties: { classification: legacyClass(TUMOR), isLocked: false, measurements: [] } });
  for (const c of makeCells(r, origin, 40)) {
    const props = { object_type: 'cell', isLocked: false };
    if (c.cls) props.classification = legacyClass(c.cls);
    props.measurements = Object.entries(c.measurements).filter(([, v]) => typeof v === 'number').map(([name, value]) => ({ name, value }));
    out.push({ type: 'Feature', id: 'PathCellObject', geometry: polygon(c.cell), nucleusGeometry: polygon(c.nucleus), properties: props });
  }
  for (let i = 0; i < 6; i++) {
    const ring = blob(r, origin[0] + 100 + r() * 600, origin[1] + 650 + r() * 100, 6, 8, 0.2);
    out.push({ type: 'Feature', id: 'PathDetectionObject', geometry: polygon(ring), properties: { object_type: 'detection', classification: legacyClass(IMMUNE), isLocked: false, measurements: [{ name: 'Area', value: round(area(ring) * PIXEL_MICRONS ** 2, 2) }] } });
  }
  return out;
}

/** Detections of one 1000 × 1000 px patch at whole-slide coordinates, as a tool's per-patch bare array. */
function patchExport(r, x0, y0) {
  const out = [];
  for (let i = 0; i < 12; i++) {
    const ring = blob(r, x0 + 40 + r() * 920, y0 + 40 + r() * 920, 8 + r() * 8, 12, 0.2);
    const cls = r() < 0.5 ? TUMOR : STROMA;
    out.push(modernFeature(uuid(r), polygon(ring), { objectType: 'detection', classification: cls, measurements: { Area: round(area(ring) * PIXEL_MICRONS ** 2, 2) } }));
  }
  return out;
}

/** One feature per line inside the array: small diffs, still one JSON value. */
function arrayText(features) {
  return `[\n${features.map((f) => JSON.stringify(f)).join(',\n')}\n]\n`;
}

function collectionText(fc) {
  return `{"type":"FeatureCollection","features":[\n${fc.features.map((f) => JSON.stringify(f)).join(',\n')}\n]}\n`;
}

export function generate(out) {
  mkdirSync(join(out, 'patches'), { recursive: true });
  writeFileSync(join(out, 'qupath-0.4.geojson'), collectionText(modernExport(rng(4))));
  writeFileSync(join(out, 'qupath-0.2.json'), arrayText(legacyExport(rng(2))));
  const r = rng(7);
  for (const [row, col] of [[0, 0], [0, 1], [1, 0]]) {
    writeFileSync(join(out, 'patches', `patch-${row}-${col}.json`), arrayText(patchExport(r, 41000 + col * 1000, 86000 + row * 1000)));
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({ options: { out: { type: 'string', default: HERE } } });
  generate(values.out);
}
