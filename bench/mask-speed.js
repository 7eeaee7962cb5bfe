// Label mask → polygons speed and memory: a synthetic 10,000 × 10,000 mask with 100,000 labels (run after `npm run build`).
// Usage: node bench/mask-speed.js [--size 10000] [--labels 100000]
import { performance } from 'node:perf_hooks';
import { labelFeature, labelsOf } from '../dist/raster/features.js';
import { traceLabelRings } from '../dist/raster/trace.js';

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const size = arg('size', 10_000);
const labels = arg('labels', 100_000);

// A fixed seed: the same mask on every run, so runs compare.
let seed = 0x9e3779b9;
function random() {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

const mb = (bytes) => `${(bytes / 1048576).toFixed(0)} MiB`;
const peakRss = () => process.resourceUsage().maxRSS * 1024;

/**
 * Cells on a jittered grid, one ellipse per cell, like segmented nuclei: radii up to 0.65 of a cell so neighbours
 * often touch (a later label overwrites an earlier one), one in ten with a hole, a few with a detached fragment.
 * Labels are a shuffled range, so label order is not raster order.
 */
function synthesise() {
  const data = new Uint32Array(size * size);
  const side = Math.ceil(Math.sqrt(labels));
  const cell = size / side;
  const values = new Uint32Array(labels);
  for (let i = 0; i < labels; i++) values[i] = i + 1;
  for (let i = labels - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    const t = values[i]; values[i] = values[j]; values[j] = t;
  }
  const ellipse = (L, cx, cy, rx, ry, clear) => {
    const x0 = Math.max(0, Math.floor(cx - rx)), x1 = Math.min(size - 1, Math.ceil(cx + rx));
    const y0 = Math.max(0, Math.floor(cy - ry)), y1 = Math.min(size - 1, Math.ceil(cy + ry));
    for (let y = y0; y <= y1; y++) {
      const dy = (y + 0.5 - cy) / ry, row = y * size;
      for (let x = x0; x <= x1; x++) {
        const dx = (x + 0.5 - cx) / rx;
        if (dx * dx + dy * dy > 1) continue;
        if (clear) { if (data[row + x] === L) data[row + x] = 0; } else data[row + x] = L;
      }
    }
  };
  for (let k = 0; k < labels; k++) {
    const gx = k % side, gy = Math.floor(k / side);
    const L = values[k];
    const cx = (gx + 0.5 + (random() - 0.5) * 0.3) * cell, cy = (gy + 0.5 + (random() - 0.5) * 0.3) * cell;
    const rx = cell * (0.3 + random() * 0.35), ry = cell * (0.3 + random() * 0.35);
    ellipse(L, cx, cy, rx, ry, false);
    const r = random();
    if (r < 0.1) ellipse(L, cx, cy, rx * 0.4, ry * 0.4, true);
    else if (r < 0.13) ellipse(L, cx + rx * 0.8, cy - ry * 1.1, 2.5, 2.5, false);
  }
  return { width: size, height: size, data };
}

let t = performance.now();
const mask = synthesise();
const synthMs = performance.now() - t;
let foreground = 0;
for (let i = 0; i < mask.data.length; i++) if (mask.data[i] !== 0) foreground++;
globalThis.gc?.();
const rssBefore = process.memoryUsage().rss;
const peakBefore = peakRss();

t = performance.now();
let cpu = process.cpuUsage();
const rings = traceLabelRings(mask);
const traceMs = performance.now() - t;
const traceCpu = process.cpuUsage(cpu);

t = performance.now();
cpu = process.cpuUsage();
let features = 0, polygons = 0, holes = 0, vertices = 0, area = 0;
for (const parts of labelsOf(rings)) {
  const f = labelFeature(rings, parts, 0);
  features++;
  const polys = f.geometry.type === 'Polygon' ? [f.geometry.coordinates] : f.geometry.coordinates;
  polygons += polys.length;
  for (const p of polys) { holes += p.length - 1; for (const r of p) vertices += r.length - 1; }
  area += f.properties.area;
}
const featureMs = performance.now() - t;
const featureCpu = process.cpuUsage(cpu);
const cpuS = (u) => `${((u.user + u.system) / 1e6).toFixed(2)} s CPU`;
const peakAfter = peakRss();

if (area !== foreground) throw new Error(`areas sum to ${area}, the mask has ${foreground} labelled pixels`);
console.log(`mask ${size} × ${size} (${mb(mask.data.byteLength)} of Uint32 labels), ${labels} labels, ${foreground} labelled pixels; synthesised in ${(synthMs / 1000).toFixed(2)} s`);
console.log(`raster pass + ring tracing: ${(traceMs / 1000).toFixed(2)} s (${cpuS(traceCpu)}) → ${rings.count} rings, ${rings.xy.length / 2} vertices (${mb(rings.xy.byteLength)})`);
console.log(`features built (GeoJSON arrays, one at a time): ${(featureMs / 1000).toFixed(2)} s (${cpuS(featureCpu)}) → ${features} features, ${polygons} polygons, ${holes} holes, ${vertices} vertices`);
console.log(`total conversion ${((traceMs + featureMs) / 1000).toFixed(2)} s; RSS with the mask loaded ${mb(rssBefore)}, peak RSS ${mb(peakAfter)} (peak before conversion ${mb(peakBefore)}, so conversion added ≤ ${mb(Math.max(0, peakAfter - rssBefore))})`);
