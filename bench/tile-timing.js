// Timing of tileFeatures on generated cells over 4 zooms against geojson-vt + vt-pbf + JSON.stringify (not a test).
// Run after `npm run build`: node bench/tile-timing.js [cells=50000] [rounds=4]. CPU times, best of rounds.
import { tileFeatures } from '../dist/stages/tile/tiler.js';
import geojsonvt from 'geojson-vt';
import { createRequire } from 'node:module';
const vtpbf = createRequire(import.meta.url)('vt-pbf');
function rng(seed) { let s = seed >>> 0; return () => { s = (s + 0x6d2b79f5) >>> 0; let t = s; t = Math.imul(t ^ (t >>> 15), t | 1); t ^= t + Math.imul(t ^ (t >>> 7), t | 61); return ((t ^ (t >>> 14)) >>> 0) / 4294967296; }; }
const r = rng(42);
const N = +(process.argv[2] ?? 50000), cellPx = 4096, side = 65536, cx = 3 * 4096, cy = 5 * 4096;
const lon = (x) => (x / side) * 360 - 180;
const lat = (y) => { const yy = 0.5 - y / side; return (360 * Math.atan(Math.exp(yy * 2 * Math.PI))) / Math.PI - 90; };
const feats = [], geo = [];
for (let i = 0; i < N; i++) {
  const x = cx + r() * cellPx, y = cy + r() * cellPx, rad = 10 + r() * 10, nv = 16 + Math.floor(r() * 9);
  const ring = [];
  for (let k = 0; k < nv; k++) { const a = (k / nv) * 2 * Math.PI, rr = rad * (0.8 + 0.4 * r()); ring.push([+(x + rr * Math.cos(a)).toFixed(2), +(y + rr * Math.sin(a)).toFixed(2)]); }
  ring.push(ring[0]);
  const props = { label: i, area: +(Math.PI * rad * rad).toFixed(1), class: ['tumor', 'stroma', 'immune'][i % 3], score: +r().toFixed(3) };
  feats.push({ seq: i, layer: 0, feature: { type: 'Feature', id: i, featureClass: 'cell', properties: props, geometry: { type: 'Polygon', coordinates: [ring] } } });
  geo.push({ type: 'Feature', id: i, properties: { featureClass: 'cell', ...props }, geometry: { type: 'Polygon', coordinates: [ring.map(([x, y]) => [lon(x), lat(y)])] } });
}
const spec = (lod) => ({ side, minZoom: 4, maxZoom: 7, finestZoom: 7, cell: { z: 4, x: 3, y: 5 }, layers: [{ id: 'cells' }], formats: { json: true, pbf: true }, lod, tileBudget: 500 * 1024 });
function baseline() {
  const idx = new geojsonvt({ type: 'FeatureCollection', features: geo }, { maxZoom: 7, indexMaxZoom: 7, indexMaxPoints: 0, buffer: 64, extent: 4096, tolerance: 3 });
  let n = 0;
  for (let z = 4; z <= 7; z++) { const d = 2 ** (z - 4); for (let x = 3 * d; x < 4 * d; x++) for (let y = 5 * d; y < 6 * d; y++) {
    const t = idx.getTile(z, x, y); if (!t) continue;
    n += vtpbf.fromGeojsonVt({ cells: t }, { version: 2 }).length;
    const ts = side / 2 ** z;
    n += Buffer.from(JSON.stringify({ type: 'FeatureCollection', features: t.features.map((f) => ({ type: 'Feature', id: f.id, properties: f.tags, geometry: { type: 'Polygon', coordinates: f.geometry.map((rr) => rr.map(([a, b]) => [x * ts + a * ts / 4096, y * ts + b * ts / 4096])) } })) })).length;
  } }
  return n;
}
const wall = {};
const time = (fn, name) => { const c0 = process.cpuUsage(); const t0 = performance.now(); fn(); const t = performance.now() - t0; const c = process.cpuUsage(c0); if (name) wall[name] = Math.min(wall[name] ?? Infinity, t); return (c.user + c.system) / 1000; };
const best = { none: Infinity, auto: Infinity, base: Infinity, calib: Infinity };
for (let i = 0; i < +(process.argv[3] ?? 4); i++) {
  best.calib = Math.min(best.calib, time(() => { let x = 0; for (let k = 0; k < 1e8; k++) x += k & 7; return x; }));
  best.none = Math.min(best.none, time(() => tileFeatures(feats, spec('none')), 'none'));
  best.auto = Math.min(best.auto, time(() => tileFeatures(feats, spec('auto')), 'auto'));
  best.base = Math.min(best.base, time(baseline, 'base'));
}
console.log(`N=${N} best cpu ms: ours lod none ${best.none.toFixed(0)}, ours lod auto ${best.auto.toFixed(0)}, geojson-vt+vt-pbf+JSON.stringify ${best.base.toFixed(0)} (x${(best.base / best.none).toFixed(2)} / x${(best.base / best.auto).toFixed(2)}); calibration loop 1e8: ${best.calib.toFixed(0)} ms`);
console.log(`best wall ms: ours lod none ${wall.none.toFixed(0)}, ours lod auto ${wall.auto.toFixed(0)}, baseline ${wall.base.toFixed(0)} (x${(wall.base / wall.none).toFixed(2)} / x${(wall.base / wall.auto).toFixed(2)})`);
