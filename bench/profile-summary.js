// Summarises the .cpuprofile files of one run (`node --cpu-prof --cpu-prof-dir DIR ...`, one per thread): busy vs idle per
// thread over the whole run and over the tiling phase, garbage collection, and the functions with the most self time.
//
// Usage: node bench/profile-summary.js DIR [--top 12] [--phase-fn tileUnit]
// The tiling phase runs from the first to the last sample, on any thread, inside a function named by --phase-fn.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '12' }, 'phase-fn': { type: 'string', default: 'tileUnit' } },
});
if (positionals.length !== 1) {
  process.stderr.write('usage: node bench/profile-summary.js DIR [--top N] [--phase-fn NAME]\n');
  process.exit(2);
}
const dir = positionals[0];
const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).sort();

/** Per sample: its time (µs since the profile's start), its duration, its leaf node. */
function load(file) {
  const p = JSON.parse(readFileSync(join(dir, file), 'utf8'));
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const samples = [];
  let t = p.startTime;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i];
    const next = i + 1 < p.timeDeltas.length ? p.timeDeltas[i + 1] : 0;
    samples.push({ t, dt: Math.max(0, next), node: byId.get(p.samples[i]) });
  }
  /** Whether `node` or a caller of it is named `name`. */
  const within = (node, name) => {
    for (let id = node.id; id !== undefined; id = parent.get(id)) if (byId.get(id).callFrame.functionName === name) return true;
    return false;
  };
  return { file, start: p.startTime, end: p.endTime, samples, within };
}

const profiles = files.map(load);
let phaseStart = Infinity;
let phaseEnd = -Infinity;
for (const p of profiles) {
  for (const s of p.samples) {
    if (p.within(s.node, args['phase-fn'])) { phaseStart = Math.min(phaseStart, s.t); phaseEnd = Math.max(phaseEnd, s.t); }
  }
}
const ms = (us) => (us / 1000).toFixed(0);
const pct = (a, b) => (b > 0 ? `${((100 * a) / b).toFixed(1)}%` : '–');
const lines = [];
lines.push(`tiling phase (first to last sample in ${args['phase-fn']}): ${Number.isFinite(phaseStart) ? `${ms(phaseEnd - phaseStart)} ms` : 'none'}`);
lines.push('| thread | profile ms | busy | idle | GC | busy in tiling phase | GC in tiling phase |');
lines.push('|---|---:|---:|---:|---:|---:|---:|');
const selfTimes = new Map();
profiles.forEach((p, i) => {
  let busy = 0, idle = 0, gc = 0, phaseBusy = 0, phaseAll = 0, phaseGc = 0;
  for (const s of p.samples) {
    const name = s.node.callFrame.functionName;
    const inPhase = s.t >= phaseStart && s.t <= phaseEnd;
    if (inPhase) phaseAll += s.dt;
    // A piscina worker waiting for its next task spins in atomicsWaitLoop: idle, as far as the build is concerned.
    if (name === '(idle)' || name === 'atomicsWaitLoop') { idle += s.dt; continue; }
    busy += s.dt;
    if (inPhase) phaseBusy += s.dt;
    if (name === '(garbage collector)') { gc += s.dt; if (inPhase) phaseGc += s.dt; }
    const url = s.node.callFrame.url.replace(/^.*\/(dist|node_modules)\//, '$1/');
    const key = `${i === 0 ? 'main' : `worker ${i}`}: ${name || '(anonymous)'} ${url ? `${url}:${s.node.callFrame.lineNumber + 1}` : ''}`;
    selfTimes.set(key, (selfTimes.get(key) ?? 0) + s.dt);
  }
  const total = p.end - p.start;
  lines.push(`| ${i === 0 ? 'main' : `worker ${i}`} (${p.file}) | ${ms(total)} | ${pct(busy, total)} | ${pct(idle, total)} | ${pct(gc, busy)} of busy | `
    + `${pct(phaseBusy, phaseAll)} | ${pct(phaseGc, phaseBusy)} of busy |`);
});
lines.push('');
lines.push(`top self time (ms):`);
for (const [k, v] of [...selfTimes].sort((a, b) => b[1] - a[1]).slice(0, Number(args.top))) lines.push(`  ${ms(v).padStart(6)}  ${k}`);
process.stdout.write(`${lines.join('\n')}\n`);
