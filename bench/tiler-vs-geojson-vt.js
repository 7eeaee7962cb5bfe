// The tiling stage alone on a real slide shape: our tiler against geojson-vt on the same features and zooms, one thread.
//
// Usage (after `npm run build`): node bench/tiler-vs-geojson-vt.js FILE [--max-zoom 8] [--rounds 3]
// FILE: a FeatureCollection that fits one JSON.parse (e.g. .bench/slide-real100k-s1.json, made by `npm run bench`).
// Times, best of the rounds, CPU seconds of this thread (process.cpuUsage; garbage collection included):
//   tiling alone — ours: every zoom 0..max of the whole world placed (quantised, simplified, clipped where a feature
//   crosses a buffered tile edge), no encoding; geojson-vt: its index built down to max and every tile transformed
//   to tile coordinates (getTile).
//   tiling + PBF — ours with the PBF encoder; geojson-vt + vt-pbf on every tile.
// Both start from the same parsed GeoJSON features (geojson-vt's in lon/lat, projected beforehand, untimed).
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import GeoJSONVT from 'geojson-vt';
import { tileFeatures } from '../dist/stages/tile/tiler.js';

const vtpbf = createRequire(import.meta.url)('vt-pbf');
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { 'max-zoom': { type: 'string', default: '8' }, rounds: { type: 'string', default: '3' } },
});
if (positionals.length !== 1) {
  process.stderr.write('usage: node bench/tiler-vs-geojson-vt.js FILE [--max-zoom N] [--rounds N]\n');
  process.exit(2);
}
const maxZoom = Number(values['max-zoom']);
const data = JSON.parse(readFileSync(positionals[0], 'utf8'));
const features = data.features;
let extent = 1;
const each = (c, fn) => { if (typeof c[0] === 'number') fn(c); else for (const x of c) each(x, fn); };
for (const f of features) each(f.geometry.coordinates, (p) => { extent = Math.max(extent, p[0], p[1]); });
const side = 2 ** Math.ceil(Math.log2(extent));

const ours = features.map((feature, seq) => ({ seq, layer: 0, feature }));
// geojson-vt knows lon/lat only: the pixel world onto the Web Mercator square, so its tile z/x/y is ours.
const lonLat = (p) => [(p[0] / side) * 360 - 180, (Math.atan(Math.sinh(Math.PI * (1 - (2 * p[1]) / side))) * 180) / Math.PI];
const project = (c) => (typeof c[0] === 'number' ? lonLat(c) : c.map(project));
const geo = {
  type: 'FeatureCollection',
  features: features.map((f) => ({ type: 'Feature', id: f.id, properties: { featureClass: f.featureClass, ...f.properties }, geometry: { type: f.geometry.type, coordinates: project(f.geometry.coordinates) } })),
};

const spec = (formats, lod) => ({
  side, minZoom: 0, maxZoom, finestZoom: maxZoom, layers: [{ id: 'cells' }], formats, lod, tileBudget: 500 * 1024,
});

/** geojson-vt down to maxZoom, every tile transformed; with `pbf`, each encoded by vt-pbf. Returns tiles and bytes. */
function geojsonVt(pbf) {
  const index = new GeoJSONVT(geo, { maxZoom, indexMaxZoom: maxZoom, indexMaxPoints: 0, buffer: 64, extent: 4096, tolerance: 3 });
  let tiles = 0, bytes = 0;
  for (const { z, x, y } of index.tileCoords) {
    const t = index.getTile(z, x, y);
    if (!t || t.features.length === 0) continue;
    tiles++;
    if (pbf) bytes += vtpbf.fromGeojsonVt({ cells: t }, { version: 2 }).length;
  }
  return { tiles, bytes };
}

function ourTiler(formats, lod) {
  const r = tileFeatures(ours, spec(formats, lod));
  return { tiles: r.length, bytes: r.reduce((n, t) => n + (t.pbf?.byteLength ?? 0), 0) };
}

function cpu(fn) {
  const c0 = process.cpuUsage();
  const out = fn();
  const c = process.cpuUsage(c0);
  return { ...out, seconds: (c.user + c.system) / 1e6 };
}

const runs = {
  'ours, tiling alone (lod none)': () => ourTiler({ json: false, pbf: false }, 'none'),
  'geojson-vt, tiling alone': () => geojsonVt(false),
  'ours, tiling + PBF (lod none)': () => ourTiler({ json: false, pbf: true }, 'none'),
  'ours, tiling + PBF (lod auto: thinning, sub-pixel points)': () => ourTiler({ json: false, pbf: true }, 'auto'),
  'geojson-vt + vt-pbf': () => geojsonVt(true),
};
const best = {};
for (let i = 0; i < Number(values.rounds); i++) {
  for (const [name, fn] of Object.entries(runs)) {
    const r = cpu(fn);
    if (!best[name] || r.seconds < best[name].seconds) best[name] = r;
  }
}
console.log(`${features.length} features, world ${side} px, zooms 0-${maxZoom}; best of ${values.rounds} rounds, CPU seconds of one thread`);
for (const [name, r] of Object.entries(best)) console.log(`  ${r.seconds.toFixed(2).padStart(7)} s  ${name}: ${r.tiles} tiles${r.bytes ? `, ${(r.bytes / 1e6).toFixed(1)} MB PBF` : ''}`);
const ratio = (a, b) => (best[b].seconds / best[a].seconds).toFixed(2);
console.log(`geojson-vt / ours: tiling alone ×${ratio('ours, tiling alone (lod none)', 'geojson-vt, tiling alone')}, with PBF ×${ratio('ours, tiling + PBF (lod none)', 'geojson-vt + vt-pbf')}`);
