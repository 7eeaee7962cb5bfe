// Speed benchmark for validateFeature on cell-like polygon features, one core; run `npm run build` first.
// Usage: node bench/validate-speed.js [features=200000] [vertices=20] [rounds=7]
import { validateFeature, validateDocument, CollectionValidator } from '../dist/validate/index.js';

const n = Number(process.argv[2] ?? 200_000);
const vertices = Number(process.argv[3] ?? 20);
const rounds = Number(process.argv[4] ?? 7);

/** A deterministic pseudo-random generator, so every run validates the same features. */
function lcg(seed) {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

function cell(i, rnd) {
  const cx = rnd() * 100_000;
  const cy = rnd() * 100_000;
  const r = 5 + rnd() * 10;
  const ring = [];
  for (let k = 0; k < vertices; k++) {
    const a = (2 * Math.PI * k) / vertices;
    const rr = r * (0.8 + 0.4 * rnd());
    ring.push([Math.round((cx + rr * Math.cos(a)) * 100) / 100, Math.round((cy + rr * Math.sin(a)) * 100) / 100]);
  }
  ring.push([ring[0][0], ring[0][1]]);
  return {
    type: 'Feature',
    id: i,
    geometry: { type: 'Polygon', coordinates: [ring] },
    properties: { label: i, area: Math.round(Math.PI * r * r), cellType: i % 3 === 0 ? 'tumor' : 'stroma', score: rnd() },
  };
}

// Features come from JSON.parse in the real pipeline: parse them too, so the objects have the same shapes.
const rnd = lcg(42);
const features = JSON.parse(JSON.stringify(Array.from({ length: n }, (_, i) => cell(i, rnd))));

let sink = 0;
function once(fn) {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < features.length; i++) sink += fn(features[i], i).length;
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

function measure(name, fn) {
  once(fn); // warm-up: let the JIT settle before timing
  const rates = [];
  for (let r = 0; r < rounds; r++) rates.push(features.length / once(fn));
  rates.sort((a, b) => a - b);
  const median = rates[Math.floor(rates.length / 2)];
  console.log(`${name}: ${Math.round(median).toLocaleString('en-US')} features/s (median of ${rounds}; min ${Math.round(rates[0]).toLocaleString('en-US')}, max ${Math.round(rates[rates.length - 1]).toLocaleString('en-US')})`);
  return median;
}

console.log(`${n.toLocaleString('en-US')} cell features, ${vertices} vertices + closing position, 4 properties; node ${process.version}`);
const rate = measure('validateFeature', (f) => validateFeature(f));
const v = new CollectionValidator();
measure('CollectionValidator.feature', (f, i) => v.feature(f, i));
const t0 = process.hrtime.bigint();
const issues = validateDocument({ type: 'FeatureCollection', features });
console.log(`validateDocument (one collection): ${Math.round(n / (Number(process.hrtime.bigint() - t0) / 1e9)).toLocaleString('en-US')} features/s, ${issues.length} issues`);
if (sink !== 0) console.log(`unexpected issues: ${sink}`);
console.log(rate >= 300_000 ? 'target of 300,000 features/s met' : 'below the target of 300,000 features/s');
