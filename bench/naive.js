// The naive baseline of issue 4, kept as a user would write it: whole file in memory, one geojson-vt index, vt-pbf per tile, one thread.
//
// Usage: node bench/naive.js INPUT OUTDIR [--min-zoom 0] [--max-zoom 5] [--layer NAME] [--format json,pbf|pbf]
// Writes OUTDIR/{z}/{x}/{y}.json (the tile's features in global pixels) and OUTDIR/{z}/{x}/{y}.pbf for every
// non-empty tile from --min-zoom to --max-zoom (with --format pbf the PBF tiles only), then prints a one-line JSON
// summary on stderr.
// It is deliberately not optimised: it is the yardstick, and it must fail where the naive approach fails
// (readFileSync of a file over V8's 512 Mi-character string limit).
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import GeoJSONVT from 'geojson-vt';
import vtpbf from 'vt-pbf';

const EXTENT = 4096;

const { values, positionals } = parseArgs({
  args: process.argv.slice(2),
  allowPositionals: true,
  options: {
    'min-zoom': { type: 'string', default: '0' },
    'max-zoom': { type: 'string', default: '5' },
    layer: { type: 'string' },
    format: { type: 'string', default: 'json,pbf' },
  },
});
if (positionals.length !== 2 || !['json,pbf', 'pbf'].includes(values.format)) {
  process.stderr.write('usage: node bench/naive.js INPUT OUTDIR [--min-zoom N] [--max-zoom N] [--layer NAME] [--format json,pbf|pbf]\n');
  process.exit(2);
}
const [input, outDir] = positionals;
const minZoom = Number(values['min-zoom']);
const maxZoom = Number(values['max-zoom']);
const layer = values.layer ?? basename(input).replace(/\.(geo)?json$/i, '');
const writeJson = values.format === 'json,pbf';
const times = {};
let t0 = performance.now();
const lap = (name) => {
  const t = performance.now();
  times[name] = Math.round(t - t0);
  t0 = t;
};

let text = readFileSync(input, 'utf8');
lap('readMs');
const data = JSON.parse(text);
text = null; // as in the usual one-liner JSON.parse(readFileSync(...)): the string is garbage once parsed
lap('parseMs');

// geojson-vt only knows lon/lat: put the pixel world (a power-of-two square from the origin) onto the Web
// Mercator square, so that tile z/x/y of the library is tile z/x/y of the pixel pyramid.
let extentPx = 1;
const eachPosition = (coords, fn) => {
  if (typeof coords[0] === 'number') fn(coords);
  else for (const c of coords) eachPosition(c, fn);
};
const eachGeometry = (g, fn) => {
  if (!g) return;
  if (g.type === 'GeometryCollection') g.geometries.forEach((x) => eachGeometry(x, fn));
  else eachPosition(g.coordinates, fn);
};
for (const f of data.features) eachGeometry(f.geometry, (p) => { extentPx = Math.max(extentPx, p[0], p[1]); });
const S = 2 ** Math.ceil(Math.log2(extentPx));
for (const f of data.features) {
  eachGeometry(f.geometry, (p) => {
    p[0] = (p[0] / S) * 360 - 180;
    p[1] = (Math.atan(Math.sinh(Math.PI * (1 - (2 * p[1]) / S))) * 180) / Math.PI;
  });
}
lap('projectMs');

const index = new GeoJSONVT(data, { maxZoom, indexMaxZoom: maxZoom, extent: EXTENT, buffer: 64, tolerance: 3 });
lap('indexMs');

function toPixels(ring, z, x, y) {
  const size = S / 2 ** z;
  return ring.map(([tx, ty]) => [(x + tx / EXTENT) * size, (y + ty / EXTENT) * size]);
}

function ringArea(ring) {
  let s = 0;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) s += ring[j][0] * ring[i][1] - ring[i][0] * ring[j][1];
  return s;
}

function toGeometry(feature, z, x, y) {
  if (feature.type === 1) {
    const pts = toPixels(feature.geometry, z, x, y);
    return pts.length === 1 ? { type: 'Point', coordinates: pts[0] } : { type: 'MultiPoint', coordinates: pts };
  }
  const rings = feature.geometry.map((r) => toPixels(r, z, x, y));
  if (feature.type === 2) {
    return rings.length === 1 ? { type: 'LineString', coordinates: rings[0] } : { type: 'MultiLineString', coordinates: rings };
  }
  // geojson-vt winds outer rings positive in y-down coordinates; each one starts a polygon.
  const polygons = [];
  for (const ring of rings) {
    if (ringArea(ring) > 0 || polygons.length === 0) polygons.push([ring]);
    else polygons[polygons.length - 1].push(ring);
  }
  return polygons.length === 1 ? { type: 'Polygon', coordinates: polygons[0] } : { type: 'MultiPolygon', coordinates: polygons };
}

const madeDirs = new Set();
let tiles = 0;
let bytes = 0;
const stack = [[0, 0, 0]];
while (stack.length) {
  const [z, x, y] = stack.pop();
  const tile = index.getTile(z, x, y);
  if (!tile || tile.features.length === 0) continue;
  if (z >= minZoom) {
    const dir = join(outDir, String(z), String(x));
    if (!madeDirs.has(dir)) {
      mkdirSync(dir, { recursive: true });
      madeDirs.add(dir);
    }
    if (writeJson) {
      const fc = {
        type: 'FeatureCollection',
        features: tile.features.map((f) => ({
          type: 'Feature',
          ...(f.id !== undefined ? { id: f.id } : {}),
          geometry: toGeometry(f, z, x, y),
          properties: f.tags,
        })),
      };
      const json = JSON.stringify(fc);
      writeFileSync(join(dir, `${y}.json`), json);
      bytes += Buffer.byteLength(json);
    }
    const pbf = vtpbf.fromGeojsonVt({ [layer]: tile }, { version: 2, extent: EXTENT });
    writeFileSync(join(dir, `${y}.pbf`), pbf);
    tiles++;
    bytes += pbf.length;
  }
  if (z < maxZoom) {
    for (let i = 3; i >= 0; i--) stack.push([z + 1, 2 * x + (i & 1), 2 * y + (i >> 1)]);
  }
}
lap('tilesMs');

process.stderr.write(JSON.stringify({ features: data.features.length, worldSize: S, tiles, files: writeJson ? tiles * 2 : tiles, bytes, ...times }) + '\n');
