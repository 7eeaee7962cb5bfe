// Memory benchmark: validates a generated single-line FeatureCollection over 512 MiB (beyond V8's string limit) and reports peak RSS.
//
// Usage: npm run build && node bench/validate-memory.js [--features 1000000] [--vertices 30] [--file PATH] [--reuse] [--keep]
//   --reuse  keep an existing file of the same name instead of generating it again
//   --keep   do not delete the generated file at the end
// Prints: file size, generation time, reader throughput (split only), and for `mudm-tiles validate FILE`: wall time,
// exit code and peak RSS (from /usr/bin/time -v, else by polling VmHWM in /proc/PID/status). Target: peak RSS < 300 MB.
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { setInterval, clearInterval } from 'node:timers';
// Deterministic, so every run validates the same bytes (the script runs after `npm run build`).
import { mulberry32 } from '../dist/random.js';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const { values } = parseArgs({
  options: {
    features: { type: 'string', default: '1000000' },
    vertices: { type: 'string', default: '30' },
    file: { type: 'string' },
    reuse: { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
  },
});
const count = Number(values.features);
const vertices = Number(values.vertices);
const file = resolve(values.file ?? join(tmpdir(), `mudm-validate-memory-${count}x${vertices}.json`));


const CLASSES = ['tumor', 'stroma', 'lymphocyte', 'macrophage', 'necrosis'];

/** A cell outline: a jittered ellipse of `vertices` points, closed, in float pixel coordinates. */
function cell(i, rnd) {
  const cx = 200 + rnd() * 199_600;
  const cy = 200 + rnd() * 99_600;
  const rx = 6 + rnd() * 8;
  const ry = rx * (0.7 + 0.3 * rnd());
  const ring = [];
  for (let k = 0; k < vertices; k++) {
    const a = (2 * Math.PI * k) / vertices;
    const j = 0.85 + 0.3 * rnd();
    ring.push([Math.round((cx + rx * j * Math.cos(a)) * 1000) / 1000, Math.round((cy + ry * j * Math.sin(a)) * 1000) / 1000]);
  }
  ring.push(ring[0]);
  return {
    type: 'Feature',
    id: i + 1,
    featureClass: 'cell',
    geometry: { type: 'Polygon', coordinates: [ring] },
    properties: {
      label: i + 1,
      class: CLASSES[Math.floor(rnd() * CLASSES.length)],
      area: Math.round(Math.PI * rx * ry * 100) / 100,
      score: Math.round(rnd() * 10_000) / 10_000,
      nucleusRatio: Math.round((0.2 + 0.5 * rnd()) * 1000) / 1000,
    },
  };
}

async function generate() {
  const out = createWriteStream(file);
  const write = async (text) => {
    // Honour backpressure: the file is far larger than memory should ever hold.
    if (!out.write(text)) await once(out, 'drain');
  };
  const t0 = performance.now();
  const rnd = mulberry32(20240601);
  await write('{"type":"FeatureCollection","properties":{"slide":"synthetic","stain":"H&E"},"features":[');
  const batch = [];
  for (let i = 0; i < count; i++) {
    batch.push(JSON.stringify(cell(i, rnd)));
    if (batch.length === 1000 || i === count - 1) {
      await write((i < 1000 ? '' : ',') + batch.join(','));
      batch.length = 0;
    }
  }
  await write('],"multiscale":{"axes":[{"name":"x","type":"space","unit":"pixel"},{"name":"y","type":"space","unit":"pixel"}]}}');
  out.end();
  await once(out, 'finish');
  return (performance.now() - t0) / 1000;
}

/** Runs a command, measuring wall time and peak RSS. */
function measure(command, args) {
  const timeBin = '/usr/bin/time';
  const useTime = existsSync(timeBin);
  return new Promise((done, fail) => {
    const t0 = performance.now();
    const child = spawn(useTime ? timeBin : command, useTime ? ['-v', command, ...args] : args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let hwm = 0;
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    // Without /usr/bin/time: the kernel's own high-water mark, read until the process ends.
    const poll = useTime
      ? undefined
      : setInterval(() => {
          try {
            const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
            if (m) hwm = Math.max(hwm, Number(m[1]));
          } catch {
            // The process has just exited.
          }
        }, 50);
    child.on('error', fail);
    child.on('close', (code) => {
      if (poll) clearInterval(poll);
      const wall = (performance.now() - t0) / 1000;
      const m = /Maximum resident set size \(kbytes\): (\d+)/.exec(stderr);
      const peakKiB = m ? Number(m[1]) : hwm;
      const exit = /Exit status: (\d+)/.exec(stderr);
      // CPU seconds too: on a shared machine wall time says more about the neighbours than about this program.
      const user = /User time \(seconds\): ([\d.]+)/.exec(stderr);
      const sys = /System time \(seconds\): ([\d.]+)/.exec(stderr);
      const cpu = user && sys ? Number(user[1]) + Number(sys[1]) : null;
      done({ code: exit ? Number(exit[1]) : code, wall, cpu, peakMiB: peakKiB / 1024, stdout, stderr, via: useTime ? '/usr/bin/time -v' : '/proc VmHWM' });
    });
  });
}

const MiB = 2 ** 20;
if (!existsSync(join(ROOT, 'dist/cli/main.js'))) {
  console.error("dist/ is missing: run 'npm run build' first");
  process.exit(2);
}
let genSeconds = null;
if (!(values.reuse && existsSync(file))) genSeconds = await generate();
const size = statSync(file).size;
console.log(`file: ${file}`);
console.log(`size: ${(size / MiB).toFixed(0)} MiB (${size.toLocaleString('en-US')} bytes, ${count.toLocaleString('en-US')} features of ${vertices} vertices, one line)${genSeconds === null ? '' : `, generated in ${genSeconds.toFixed(1)} s`}`);
if (size <= 512 * MiB) console.log('warning: the file is not above 512 MiB; use more --features');

const splitScript = `
import { readDocuments, fileSource } from ${JSON.stringify(join(ROOT, 'dist/io/read.js'))};
let n = 0;
for await (const ev of readDocuments(fileSource(${JSON.stringify(file)}))) if (ev.kind === 'feature') n++;
console.log(n);`;
const split = await measure(process.execPath, ['--input-type=module', '-e', splitScript]);
const cpuText = (r) => (r.cpu === null ? '' : `, ${r.cpu.toFixed(1)} s CPU (${(size / 1e6 / r.cpu).toFixed(0)} MB per CPU second)`);
console.log(`reader (split only): ${split.wall.toFixed(1)} s wall, ${(size / 1e6 / split.wall).toFixed(0)} MB/s${cpuText(split)}, ${split.stdout.trim()} features, peak RSS ${split.peakMiB.toFixed(0)} MiB`);

const v = await measure(process.execPath, [join(ROOT, 'bin/mudm-tiles.js'), 'validate', '--progress', 'none', file]);
const summary = v.stdout.trim().split('\n').filter((l) => !l.startsWith('total:')).pop();
console.log(`validate: ${v.wall.toFixed(1)} s wall, ${(size / 1e6 / v.wall).toFixed(0)} MB/s${cpuText(v)}, exit ${v.code}, peak RSS ${v.peakMiB.toFixed(0)} MiB (${v.via})`);
console.log(`  ${summary}`);
console.log(v.peakMiB < 300 ? 'peak RSS under the 300 MB target' : 'peak RSS ABOVE the 300 MB target');
console.log(JSON.stringify({ features: count, vertices, bytes: size, splitSeconds: split.wall, splitCpuSeconds: split.cpu, validateSeconds: v.wall, validateCpuSeconds: v.cpu, validateExit: v.code, peakRssMiB: Math.round(v.peakMiB), splitPeakRssMiB: Math.round(split.peakMiB) }));
if (!values.keep) rmSync(file, { force: true });
