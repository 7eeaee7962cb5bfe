// The floor of writing a pyramid as files on this machine: the tiles of an existing pyramid directory, held in memory,
// written again under a new directory by 1 or 2 threads (writeFileSync, directories made first), with no tiling at all.
//
// Usage: node bench/write-floor.js PYRAMID_DIR OUT_DIR [--threads 1]
// Prints one JSON line: files, bytes, wall seconds, and user and system CPU seconds of the process (all threads).
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

if (!isMainThread) {
  const { out, files } = workerData;
  for (const [rel, bytes] of files) writeFileSync(join(out, rel), bytes);
  parentPort.postMessage('done');
} else {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { threads: { type: 'string', default: '1' } } });
  if (positionals.length !== 2) {
    process.stderr.write('usage: node bench/write-floor.js PYRAMID_DIR OUT_DIR [--threads N]\n');
    process.exit(2);
  }
  const [src, out] = positionals;
  const threads = Number(values.threads);
  const files = [];
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.name.startsWith('.')) continue;
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.(pbf|json)$/.test(e.name) && d !== src) files.push([relative(src, p), readFileSync(p)]);
    }
  };
  walk(src);
  rmSync(out, { recursive: true, force: true });
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (const d of new Set(files.map(([rel]) => dirname(rel)))) mkdirSync(join(out, d), { recursive: true });
  // Each thread takes every n-th tile, so both write into the same directories at once, as a build's workers do.
  await Promise.all(Array.from({ length: threads }, (_, i) => new Promise((resolve, reject) => {
    const w = new Worker(new URL(import.meta.url), { workerData: { out, files: files.filter((_, k) => k % threads === i) } });
    w.on('message', resolve);
    w.on('error', reject);
  })));
  const wall = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const bytes = files.reduce((n, [, b]) => n + b.length, 0);
  process.stdout.write(`${JSON.stringify({ files: files.length, bytes, threads, wall: +wall.toFixed(2), user: +(cpu.user / 1e6).toFixed(2), sys: +(cpu.system / 1e6).toFixed(2) })}\n`);
}
