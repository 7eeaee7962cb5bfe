// Deterministic synthetic whole-slide cell annotations (muDM FeatureCollection, NDJSON or RS sequences), streamed so any size fits.
//
// Usage: node bench/generate.js --cells 100000 [--seed 1] [--nuclei points|polygons|none]
//          [--format fc-pretty|fc-lines|fc-minified|ndjson|seq] [--crlf] [--gzip] [--planes t=1,c=2,z=3]
//          [--width W --height H] [--holes] [--only cells|nuclei] [--slide NAME] [--quiet] [-o FILE]
//
// Everything about one cell is a pure function of (seed, grid site), so the same seed gives byte-identical
// output, and cells and nuclei can be written to separate files that still agree (parentId, planes, shapes).
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { resolve } from 'node:path';

export const FORMATS = ['fc-pretty', 'fc-lines', 'fc-minified', 'ndjson', 'seq'];
export const NUCLEI = ['points', 'polygons', 'none'];
export const ONLY = ['all', 'cells', 'nuclei'];
export const CLASSES = ['tumor', 'stroma', 'lymphocyte', 'macrophage', 'necrosis', 'other'];

// One cell per 900 px² on average over the whole slide, as in real H&E segmentations at ~0.25 µm/px.
const AREA_PER_CELL = 900;
// Twice as many candidate sites as cells: tissue takes about half the slide, so tissue sites are mostly filled.
const SITES_PER_CELL = 2;
// Whole slides are wider than tall; a non-square slide also exercises the square-world logic of tilers.
const ASPECT = 1.5;
const MICRONS_PER_PIXEL = 0.2527;
const FLUSH_CHARS = 1 << 20;

// ---------------------------------------------------------------- randomness

// Integer finaliser (murmur3 fmix32): good avalanche, so neighbouring site indexes give unrelated values.
function fmix(h) {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

function hash3(seed, a, b) {
  return fmix(fmix(fmix(seed ^ 0x5bd1e995) ^ a) ^ Math.imul(b + 0x632be5ab, 0x9e3779b1));
}

export function mulberry32(seed) {
  let a = seed >>> 0;
  return function next() {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Value noise: hashed lattice values blended with smoothstep, a few octaves; cheap, O(1) per query, no state.
function lattice(seed, salt, ix, iy) {
  return hash3(seed ^ Math.imul(salt, 0x27d4eb2d), ix, iy) / 4294967296;
}

function valueNoise(seed, salt, x, y) {
  const ix = Math.floor(x);
  const iy = Math.floor(y);
  const fx = x - ix;
  const fy = y - iy;
  const sx = fx * fx * (3 - 2 * fx);
  const sy = fy * fy * (3 - 2 * fy);
  const a = lattice(seed, salt, ix, iy);
  const b = lattice(seed, salt, ix + 1, iy);
  const c = lattice(seed, salt, ix, iy + 1);
  const d = lattice(seed, salt, ix + 1, iy + 1);
  return a + (b - a) * sx + (c - a) * sy + (a - b - c + d) * sx * sy;
}

function fbm(seed, salt, x, y, scale) {
  // Three octaves: tissue outline, lobes, and local density variation.
  const n1 = valueNoise(seed, salt, x / scale, y / scale);
  const n2 = valueNoise(seed, salt + 101, x / (scale * 0.4), y / (scale * 0.4));
  const n3 = valueNoise(seed, salt + 202, x / (scale * 0.15), y / (scale * 0.15));
  return (n1 * 0.6 + n2 * 0.28 + n3 * 0.12);
}

function smoothstep(e0, e1, v) {
  const t = Math.min(1, Math.max(0, (v - e0) / (e1 - e0)));
  return t * t * (3 - 2 * t);
}

// ---------------------------------------------------------------- options

function parsePlanes(spec) {
  if (spec == null || spec === '' || typeof spec === 'object') return spec || null;
  const planes = {};
  for (const part of String(spec).split(',')) {
    const m = /^\s*([tcz])\s*=\s*(\d+)\s*$/.exec(part);
    if (!m || Number(m[2]) < 1) throw new Error(`--planes: expected t=N,c=N,z=N with N >= 1, got "${part}"`);
    planes[m[1]] = Number(m[2]);
  }
  return planes;
}

/** Fills defaults and derived geometry (slide size, site grid); throws on bad options. */
export function resolveOptions(options = {}) {
  const cells = Number(options.cells ?? 1000);
  if (!Number.isSafeInteger(cells) || cells < 1) throw new Error(`--cells must be a positive integer, got ${options.cells}`);
  const seed = Number(options.seed ?? 1);
  if (!Number.isSafeInteger(seed)) throw new Error(`--seed must be an integer, got ${options.seed}`);
  const format = options.format ?? 'fc-minified';
  if (!FORMATS.includes(format)) throw new Error(`--format must be one of ${FORMATS.join(', ')}`);
  const nuclei = options.nuclei ?? 'none';
  if (!NUCLEI.includes(nuclei)) throw new Error(`--nuclei must be one of ${NUCLEI.join(', ')}`);
  const only = options.only ?? 'all';
  if (!ONLY.includes(only)) throw new Error(`--only must be one of ${ONLY.join(', ')}`);
  if (only === 'nuclei' && nuclei === 'none') throw new Error('--only nuclei needs --nuclei points or polygons');
  const qupath = Boolean(options.qupath);
  if (qupath && (nuclei !== 'polygons' || only !== 'all' || !format.startsWith('fc-') || options.planes)) {
    throw new Error('--qupath writes cells with their nuclei as QuPath exports them: give --nuclei polygons, an fc- format, no --only or --planes');
  }
  let width = options.width != null ? Number(options.width) : null;
  let height = options.height != null ? Number(options.height) : null;
  const area = cells * AREA_PER_CELL;
  if (width == null && height == null) {
    width = Math.round(Math.sqrt(area * ASPECT));
    height = Math.round(area / width);
  } else if (width == null) {
    width = Math.round(area / height);
  } else if (height == null) {
    height = Math.round(area / width);
  }
  if (!(width >= 64 && height >= 64)) throw new Error(`slide must be at least 64 x 64 px, got ${width} x ${height}`);
  const pitch = Math.sqrt((width * height) / (cells * SITES_PER_CELL));
  const cols = Math.max(1, Math.ceil(width / pitch));
  const rows = Math.max(1, Math.ceil(height / pitch));
  if (cols * rows < cells) throw new Error('too many cells for the slide size');
  return {
    cells, seed: seed >>> 0, format, nuclei, only,
    crlf: Boolean(options.crlf), holes: Boolean(options.holes), qupath,
    planes: parsePlanes(options.planes),
    width, height, cols, rows, pitchX: width / cols, pitchY: height / rows,
    tissueScale: Math.min(4000, Math.max(300, Math.sqrt(width * height) / 4)),
    slide: options.slide ?? `synthetic-s${seed}-n${cells}`,
  };
}

// ---------------------------------------------------------------- the slide model

const r2 = (v) => Math.round(v * 100) / 100;
const r4 = (v) => Math.round(v * 10000) / 10000;

function tissueWeight(o, x, y) {
  // A small floor keeps a few stray cells on the glass and guarantees enough candidate sites.
  return 0.02 + 0.98 * smoothstep(0.43, 0.53, fbm(o.seed, 1, x, y, o.tissueScale));
}

function siteCentre(o, site) {
  const col = site % o.cols;
  const row = (site - col) / o.cols;
  const h1 = hash3(o.seed, site, 11) / 4294967296;
  const h2 = hash3(o.seed, site, 12) / 4294967296;
  // Jitter of ±35% of the pitch breaks the grid while keeping neighbours apart.
  return [(col + 0.5 + (h1 - 0.5) * 0.7) * o.pitchX, (row + 0.5 + (h2 - 0.5) * 0.7) * o.pitchY];
}

/** Score per site (lower wins); choosing the N lowest gives exactly N cells, denser where tissue is. */
function siteScores(o) {
  const n = o.cols * o.rows;
  const scores = new Float64Array(n);
  for (let s = 0; s < n; s++) {
    const [x, y] = siteCentre(o, s);
    const u = (hash3(o.seed, s, 13) * 2097152 + (hash3(o.seed, s, 14) >>> 11) + 1) / 9007199254740992; // in (0, 1]: never log(0)
    scores[s] = -Math.log(u) / tissueWeight(o, x, y); // exponential race: P(win) grows with the weight
  }
  const sorted = scores.slice().sort();
  const threshold = sorted[o.cells - 1];
  let below = 0;
  for (let i = 0; i < o.cells; i++) if (sorted[i] < threshold) below++;
  return { scores, threshold, tiesAllowed: o.cells - below };
}

function classAt(o, x, y, w, rnd) {
  const u = rnd();
  if (w < 0.1) return u < 0.5 ? 'other' : u < 0.8 ? 'lymphocyte' : 'macrophage';
  if (fbm(o.seed, 4, x, y, o.tissueScale / 3) > 0.66) return u < 0.85 ? 'necrosis' : 'macrophage';
  if (fbm(o.seed, 3, x, y, o.tissueScale / 5) > 0.64) return u < 0.9 ? 'lymphocyte' : 'stroma';
  if (fbm(o.seed, 2, x, y, o.tissueScale / 1.5) > 0.5) {
    return u < 0.86 ? 'tumor' : u < 0.95 ? 'lymphocyte' : u < 0.98 ? 'macrophage' : 'other';
  }
  return u < 0.8 ? 'stroma' : u < 0.92 ? 'lymphocyte' : u < 0.97 ? 'macrophage' : 'other';
}

// Per class: base radius range, elongation range, per-vertex jitter.
const SHAPES = {
  tumor: { r: [10, 18], a: [1, 1.4], j: 0.12 },
  stroma: { r: [9, 18], a: [1.7, 2.8], j: 0.08 },
  lymphocyte: { r: [6, 8], a: [1, 1.15], j: 0.05 },
  macrophage: { r: [11, 17], a: [1, 1.3], j: 0.15 },
  necrosis: { r: [6, 13], a: [1, 1.5], j: 0.22 },
  other: { r: [6, 18], a: [1, 1.5], j: 0.12 },
};

function pointInRing(x, y, ring) {
  let inside = false;
  for (let i = 0, j = ring.length - 2; i < ring.length - 1; j = i++) {
    const [xi, yi] = ring[i];
    const [xj, yj] = ring[j];
    if ((yi > y) !== (yj > y) && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

function ringArea(ring) {
  let s = 0;
  for (let i = 0; i < ring.length - 1; i++) s += ring[i][0] * ring[i + 1][1] - ring[i + 1][0] * ring[i][1];
  return s / 2;
}

/**
 * A star-shaped ring around (cx, cy): vertices at strictly increasing angles and positive radii, so it never
 * self-intersects. Increasing angle gives a positive shoelace area in (x, y) numbers: RFC 7946's
 * counterclockwise exterior read on the raw coordinates (on screen, with y down, it looks clockwise).
 */
function starRing(cx, cy, n, radiusAt, rnd, jitter, reverse) {
  const ring = [];
  const phase = rnd() * Math.PI * 2;
  const waves = 2 + Math.floor(rnd() * 3);
  const wavePhase = rnd() * Math.PI * 2;
  for (let k = 0; k < n; k++) {
    const i = reverse ? n - 1 - k : k;
    const theta = phase + ((i + (rnd() - 0.5) * 0.5) * 2 * Math.PI) / n;
    const wobble = 1 + jitter * (0.6 * Math.sin(waves * theta + wavePhase) + 0.4 * (2 * rnd() - 1));
    const r = radiusAt(theta) * wobble;
    ring.push([r2(cx + r * Math.cos(theta)), r2(cy + r * Math.sin(theta))]);
  }
  ring.push([ring[0][0], ring[0][1]]);
  return ring;
}

function ellipseRadius(major, minor, orientation) {
  return (theta) => {
    const c = Math.cos(theta - orientation) / major;
    const s = Math.sin(theta - orientation) / minor;
    return 1 / Math.sqrt(c * c + s * s);
  };
}

/** Everything about the cell on one selected site. `id` is the output id (1-based order of cells). */
function makeCell(o, site, id, neighbourDistance) {
  const rnd = mulberry32(hash3(o.seed, site, 21));
  let [cx, cy] = siteCentre(o, site);
  const w = tissueWeight(o, cx, cy);
  const cls = classAt(o, cx, cy, w, rnd);
  const shape = SHAPES[cls];
  // Cap the size at a bit over half the distance to the nearest cell, so packed tissue rarely overlaps.
  const cap = Math.max(6, 0.58 * neighbourDistance);
  const major = Math.max(6, Math.min(cap, shape.r[0] + rnd() * (shape.r[1] - shape.r[0])));
  const aspect = shape.a[0] + rnd() * (shape.a[1] - shape.a[0]);
  const minor = Math.max(4.5, major / aspect);
  const orientation = rnd() * Math.PI;
  const reach = major * (1 + shape.j) + 0.01;
  // Keep every vertex on the slide: real annotations never have negative pixel coordinates.
  cx = Math.min(o.width - reach, Math.max(reach, cx));
  cy = Math.min(o.height - reach, Math.max(reach, cy));
  const n = Math.max(12, Math.min(40, Math.round(12 + (major - 6) * 2 + rnd() * 6)));
  const outer = starRing(cx, cy, n, ellipseRadius(major, minor, orientation), rnd, shape.j, false);
  const rings = [outer];
  const hasHole = o.holes && rnd() < 0.05;
  if (hasHole) {
    const hn = 8 + Math.floor(rnd() * 5);
    const hole = starRing(cx, cy, hn, ellipseRadius(major * 0.3, minor * 0.3, orientation), rnd, 0.08, true);
    if (hole.every(([x, y]) => pointInRing(x, y, outer))) rings.push(hole);
  }
  let area = 0;
  for (const ring of rings) area += ringArea(ring);
  const cell = {
    id, cls, cx, cy, major, minor, orientation, rings,
    area: r2(Math.abs(area)),
    // Classifier confidence: mostly high, with a tail of uncertain calls.
    score: r4(1 - Math.pow(rnd(), 2.5) * 0.85),
    plane: null, nucleus: null,
  };
  if (o.planes) {
    cell.plane = {};
    for (const dim of ['t', 'c', 'z']) {
      if (o.planes[dim]) cell.plane[dim] = Math.floor(rnd() * o.planes[dim]);
    }
  }
  if (o.nuclei !== 'none') cell.nucleus = makeNucleus(o, cell, rnd);
  return cell;
}

function makeNucleus(o, cell, rnd) {
  const outer = cell.rings[0];
  const hole = cell.rings[1];
  const base = hole ? 0.2 : 0.38 + rnd() * 0.1;
  // With a hole (a vacuole) the nucleus sits in the cytoplasm beside it, otherwise near the centre; beside it means
  // along the long axis, where an elongated cell has room.
  const u = rnd();
  const angle = hole ? cell.orientation + (u < 0.5 ? 0 : Math.PI) : u * Math.PI * 2;
  const offset = hole ? 0.6 * cell.major : 0.08 * rnd() * cell.minor;
  const nx = cell.cx + Math.cos(angle) * offset;
  const ny = cell.cy + Math.sin(angle) * offset;
  const fits = (ring) => ring.every(([x, y]) =>
    pointInRing(cell.cx + (x - cell.cx) * 1.08, cell.cy + (y - cell.cy) * 1.08, outer)
    && (!hole || !pointInRing(x, y, hole)))
    && (!hole || hole.every(([x, y]) => !pointInRing(x, y, ring)));
  if (o.nuclei === 'points') {
    const radius = r2(Math.max(1.5, base * cell.minor));
    return { kind: 'point', coordinates: [r2(nx), r2(ny)], radius, area: r2(Math.PI * radius * radius) };
  }
  const n = 8 + Math.floor(rnd() * 5);
  const ringRnd = mulberry32(Math.floor(rnd() * 4294967296));
  let scale = 1;
  let ring;
  // Shrink until it lies inside the cell (and outside its hole); lobed cells occasionally need it.
  for (let attempt = 0; attempt < 6; attempt++, scale *= 0.8) {
    const s = base * scale;
    ring = starRing(nx, ny, n, ellipseRadius(cell.major * s, Math.max(1.2, cell.minor * s), cell.orientation),
      mulberry32(Math.floor(ringRnd() * 4294967296)), 0.06, false);
    if (fits(ring)) break;
  }
  return { kind: 'polygon', rings: [ring], area: r2(Math.abs(ringArea(ring))) };
}

// ---------------------------------------------------------------- output

function cellFeature(cell) {
  const properties = { label: cell.id, area: cell.area, class: cell.cls, score: cell.score };
  if (cell.plane) Object.assign(properties, cell.plane);
  return {
    type: 'Feature',
    id: cell.id,
    featureClass: 'cell',
    geometry: { type: 'Polygon', coordinates: cell.rings },
    properties,
  };
}

function nucleusFeature(cell, cellCount) {
  const nuc = cell.nucleus;
  const properties = { label: cell.id, area: nuc.area, class: cell.cls, score: cell.score };
  // The spec keeps a point's radius in properties, never in the geometry.
  if (nuc.kind === 'point') properties.radius = nuc.radius;
  if (cell.plane) Object.assign(properties, cell.plane);
  return {
    type: 'Feature',
    id: cellCount + cell.id,
    featureClass: 'nucleus',
    parentId: cell.id,
    geometry: nuc.kind === 'point'
      ? { type: 'Point', coordinates: nuc.coordinates }
      : { type: 'Polygon', coordinates: nuc.rings },
    properties,
  };
}

export function collectionMembers(o) {
  return {
    multiscale: {
      axes: [
        { name: 'x', type: 'space', unit: 'micrometer' },
        { name: 'y', type: 'space', unit: 'micrometer' },
      ],
      coordinateTransformations: [{ type: 'scale', scale: [MICRONS_PER_PIXEL, MICRONS_PER_PIXEL] }],
    },
    properties: { slide: o.slide, stain: 'H&E', width: o.width, height: o.height },
  };
}

function indent(text, pad) {
  return pad + text.replace(/\n/g, '\n' + pad);
}

/** The measurements QuPath's cell detection writes (a subset of its names): 29 numbers per cell. */
const QUPATH_MEASUREMENTS = ['Area µm^2', 'Perimeter µm', 'Circularity', 'Max caliper µm', 'Min caliper µm', 'Eccentricity']
  .flatMap((m) => [`Nucleus: ${m}`, `Cell: ${m}`])
  .concat(['Hematoxylin OD mean', 'Hematoxylin OD std dev', 'Hematoxylin OD max', 'Hematoxylin OD min', 'Eosin OD mean', 'Eosin OD std dev', 'Eosin OD max']
    .flatMap((m) => [`Nucleus: ${m}`, `Cytoplasm: ${m}`]), ['Nucleus/Cell area ratio', 'Detection probability', 'Distance to annotation µm']);

/** A cell as QuPath 0.4+ exports a detection: a UUID, its nucleus as `nucleusGeometry`, a classification, measurements. */
function qupathFeature(o, cell) {
  const rnd = mulberry32(hash3(o.seed, cell.id, 77));
  const hex = (n) => Array.from({ length: n }, () => Math.floor(rnd() * 16).toString(16)).join('');
  const name = cell.cls[0].toUpperCase() + cell.cls.slice(1);
  const positive = rnd() < 0.4;
  const measurements = {};
  for (const m of QUPATH_MEASUREMENTS) measurements[m] = r4(m.endsWith('area ratio') ? cell.nucleus.area / cell.area : m.includes('Area') ? (m.startsWith('Nucleus') ? cell.nucleus.area : cell.area) : rnd() * 50);
  return {
    type: 'Feature', id: `${hex(8)}-${hex(4)}-4${hex(3)}-a${hex(3)}-${hex(12)}`,
    geometry: { type: 'Polygon', coordinates: cell.rings },
    nucleusGeometry: { type: 'Polygon', coordinates: cell.nucleus.rings },
    properties: { objectType: 'cell', classification: { names: [name, positive ? 'Positive' : 'Negative'], color: positive ? [200, 0, 0] : [112, 112, 225] }, measurements },
  };
}

function framing(o) {
  // QuPath's export: a bare FeatureCollection, no pixel size or slide properties.
  const members = o.qupath ? {} : collectionMembers(o);
  switch (o.format) {
    case 'fc-minified': {
      const head = JSON.stringify({ type: 'FeatureCollection', ...members, features: [] });
      return { head: head.slice(0, -2), sep: ',', tail: ']}\n', one: (f) => JSON.stringify(f) };
    }
    case 'fc-lines': {
      // GDAL's GeoJSON layout: collection members on their own lines, then one minified feature per line.
      const lines = ['{', '"type": "FeatureCollection",'];
      for (const [k, v] of Object.entries(members)) lines.push(`${JSON.stringify(k)}: ${JSON.stringify(v)},`);
      lines.push('"features": [');
      return { head: lines.join('\n') + '\n', sep: ',\n', tail: '\n]\n}\n', one: (f) => JSON.stringify(f) };
    }
    case 'fc-pretty': {
      const head = JSON.stringify({ type: 'FeatureCollection', ...members, features: [0] }, null, 2);
      const cut = head.lastIndexOf('0');
      return {
        head: head.slice(0, cut), sep: ',\n    ', tail: head.slice(cut + 1) + '\n',
        one: (f) => indent(JSON.stringify(f, null, 2), '    ').slice(4),
      };
    }
    case 'ndjson':
      return { head: '', sep: '', tail: '', one: (f) => JSON.stringify(f) + '\n' };
    case 'seq':
      return { head: '', sep: '', tail: '', one: (f) => '\x1e' + JSON.stringify(f) + '\n' };
    default:
      throw new Error(`unknown format ${o.format}`);
  }
}

/**
 * Streams a synthetic slide to `writeChunk(text)` (which may return a promise, awaited for backpressure).
 * Memory is one score per grid site (8 bytes × 2 × cells) plus one output chunk, never the features.
 * Returns { cells, nuclei, features, width, height, chars }.
 */
export async function generateSlide(options, writeChunk) {
  const o = resolveOptions(options);
  const { scores, threshold, tiesAllowed } = siteScores(o);
  const frame = framing(o);
  // Ties are vanishingly rare with 53-bit scores, but exactness needs a rule: the first ones in site order win.
  let ties = 0;
  let lastTie = -1;
  for (let s = 0; s < scores.length && ties < tiesAllowed; s++) {
    if (scores[s] === threshold) { ties++; lastTie = s; }
  }
  const selected = (site) => scores[site] < threshold || (scores[site] === threshold && site <= lastTie);

  let buffer = [];
  let buffered = 0;
  let chars = 0;
  let first = true;
  const flush = async () => {
    if (buffered === 0) return;
    let text = buffer.join('');
    if (o.crlf) text = text.replace(/\n/g, '\r\n');
    buffer = [];
    buffered = 0;
    chars += text.length;
    const r = writeChunk(text);
    if (r && typeof r.then === 'function') await r;
  };
  const emit = async (text) => {
    buffer.push(text);
    buffered += text.length;
    if (buffered >= FLUSH_CHARS) await flush();
  };
  const emitFeature = async (feature) => {
    const text = frame.one(feature);
    await emit(first ? text : frame.sep + text);
    first = false;
  };

  await emit(frame.head);
  let id = 0;
  let nuclei = 0;
  for (let site = 0; site < scores.length; site++) {
    if (!selected(site)) continue;
    id++;
    const cell = makeCell(o, site, id, nearestSelected(o, site, selected));
    if (o.qupath) {
      await emitFeature(qupathFeature(o, cell));
      nuclei++;
      continue;
    }
    if (o.only !== 'nuclei') await emitFeature(cellFeature(cell));
    if (cell.nucleus && o.only !== 'cells') {
      await emitFeature(nucleusFeature(cell, o.cells));
      nuclei++;
    }
  }
  await emit(frame.tail);
  await flush();
  const cells = o.only === 'nuclei' ? 0 : id;
  return { cells, nuclei, features: o.qupath ? cells : cells + nuclei, width: o.width, height: o.height, chars };
}

function nearestSelected(o, site, selected) {
  const col = site % o.cols;
  const row = (site - col) / o.cols;
  const [x, y] = siteCentre(o, site);
  let best = Infinity;
  for (let dy = -1; dy <= 1; dy++) {
    for (let dx = -1; dx <= 1; dx++) {
      if (dx === 0 && dy === 0) continue;
      const c = col + dx;
      const r = row + dy;
      if (c < 0 || r < 0 || c >= o.cols || r >= o.rows) continue;
      const other = r * o.cols + c;
      if (!selected(other)) continue;
      const [ox, oy] = siteCentre(o, other);
      best = Math.min(best, Math.hypot(ox - x, oy - y));
    }
  }
  return best;
}

// ---------------------------------------------------------------- command line

/** A writable sink for generateSlide: a file or stdout, optionally gzipped, honouring backpressure. */
export function openSink(path, { gzip = false } = {}) {
  const file = path && path !== '-' ? createWriteStream(path, { highWaterMark: 1 << 20 }) : process.stdout;
  const head = gzip ? createGzip({ level: 6 }) : file;
  if (gzip) head.pipe(file);
  return {
    write(chunk) {
      return head.write(chunk) ? undefined : once(head, 'drain');
    },
    async close() {
      if (gzip) head.end();
      else if (file !== process.stdout) file.end();
      if (file !== process.stdout) await finished(file);
      else if (gzip) await finished(head);
    },
  };
}

async function main(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      cells: { type: 'string' }, seed: { type: 'string' }, nuclei: { type: 'string' }, format: { type: 'string' },
      crlf: { type: 'boolean' }, gzip: { type: 'boolean' }, planes: { type: 'string' },
      width: { type: 'string' }, height: { type: 'string' }, holes: { type: 'boolean' },
      only: { type: 'string' }, slide: { type: 'string' }, qupath: { type: 'boolean' }, output: { type: 'string', short: 'o' },
      quiet: { type: 'boolean', short: 'q' }, help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`node bench/generate.js --cells N [--seed S] [--nuclei ${NUCLEI.join('|')}]
  [--format ${FORMATS.join('|')}] [--crlf] [--gzip] [--planes t=1,c=2,z=3]
  [--width W] [--height H] [--holes] [--only ${ONLY.join('|')}] [--slide NAME] [--qupath] [-q] [-o FILE]
--qupath: each cell as QuPath 0.4+ exports a detection (a UUID, nucleusGeometry, classification, 29 measurements),
  in a bare FeatureCollection; needs --nuclei polygons and an fc- format.
Prints a one-line JSON summary on stderr unless --quiet.
`);
    return 0;
  }
  const started = process.hrtime.bigint();
  const sink = openSink(values.output, { gzip: values.gzip });
  const summary = await generateSlide(values, (chunk) => sink.write(chunk));
  await sink.close();
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (!values.quiet) {
    process.stderr.write(JSON.stringify({ ...summary, seconds: Math.round(seconds * 1000) / 1000 }) + '\n');
  }
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then(
    (code) => { process.exitCode = code; },
    (err) => { process.stderr.write(`generate: ${err.message}\n`); process.exitCode = 2; },
  );
}
