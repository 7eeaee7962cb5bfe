// Benchmark harness of issue 4: generates synthetic slides, times our build (1 and 2 workers) against the naive script, prints the table.
//
// Usage (via `npm run bench`, which builds first): node bench/run.js [--sizes 100000,1000000] [--quick]
//   [--skip-naive] [--skip-one-core (no W=1 run pinned to one core at the smallest size)] [--gdal (also GDAL's ogr2ogr -f MVT, when installed)] [--out NAME (.bench/NAME.md/json, default results)] [--workers 1,2] [--seed 1]
//   [--repeat N (default 3; the median run stands)] [--keep] [--timeout SECONDS] [--build-arg ARG ...]
//   [--cli PATH (another build's bin/mudm-tiles.js)] [--poll (measure by polling /proc even if GNU time exists)]
//   [--archive (also: ours at the top worker count, PBF into one PMTiles archive (-o X.pmtiles), and the naive script
//   writing PBF only to a directory)]
// Writes .bench/results.md and .bench/results.json (or --out NAME). Inputs are cached in .bench/ by size, seed and generator.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync, openSync, closeSync,
} from 'node:fs';
import { cpus, totalmem, loadavg } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setInterval, clearInterval } from 'node:timers';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BENCH = join(ROOT, '.bench');
const GENERATOR = join(ROOT, 'bench', 'generate.js');
const NAIVE = join(ROOT, 'bench', 'naive.js');
const MiB = 1024 * 1024;

const { values: args } = parseArgs({
  args: process.argv.slice(2),
  options: {
    sizes: { type: 'string', default: '100000,1000000' },
    quick: { type: 'boolean' },
    'skip-naive': { type: 'boolean' },
    'skip-one-core': { type: 'boolean' },
    gdal: { type: 'boolean' },
    out: { type: 'string', default: 'results' },
    workers: { type: 'string', default: '1,2' },
    seed: { type: 'string', default: '1' },
    repeat: { type: 'string', default: '3' },
    keep: { type: 'boolean' },
    timeout: { type: 'string', default: '3600' },
    'build-arg': { type: 'string', multiple: true, default: [] },
    cli: { type: 'string' },
    poll: { type: 'boolean' },
    archive: { type: 'boolean' },
  },
});
const sizes = args.quick ? [100000] : args.sizes.split(',').map((s) => Number(s.trim()));
const workerCounts = args.workers.split(',').map((s) => Number(s.trim()));
const seed = Number(args.seed);
const repeat = Math.max(1, Number(args.repeat));
const timeoutMs = Number(args.timeout) * 1000;
if (sizes.some((n) => !Number.isSafeInteger(n) || n < 1) || workerCounts.some((w) => !Number.isSafeInteger(w) || w < 1)) {
  process.stderr.write('bench: --sizes and --workers take comma-separated positive integers\n');
  process.exit(2);
}

const CLI = args.cli ? resolve(args.cli) : join(ROOT, 'bin', 'mudm-tiles.js');
const log = (msg) => process.stderr.write(`bench: ${msg}\n`);

// ---------------------------------------------------------------- measuring a child process

const GNU_TIME = (() => {
  // BusyBox and BSD `time` lack -v/-o; only trust GNU time, else fall back to polling /proc.
  if (args.poll || !existsSync('/usr/bin/time')) return null;
  const r = spawnSync('/usr/bin/time', ['-v', 'true'], { encoding: 'utf8' });
  return r.status === 0 && /Maximum resident set size/.test(r.stderr) ? '/usr/bin/time' : null;
})();
const CLK_TCK = (() => {
  const r = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  return Number(r.stdout) > 0 ? Number(r.stdout) : 100;
})();

function readProc(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const hwm = Number(/VmHWM:\s+(\d+)\s+kB/.exec(status)?.[1] ?? 0) * 1024;
    // Fields after the command name, which may itself hold spaces and parentheses.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    return { hwm, cpu: ticks / CLK_TCK, sys: (Number(f[12]) + Number(f[14])) / CLK_TCK };
  } catch {
    return null;
  }
}

function parseGnuTime(text) {
  const num = (re) => Number(re.exec(text)?.[1] ?? NaN);
  return {
    cpu: num(/User time \(seconds\): ([\d.]+)/) + num(/System time \(seconds\): ([\d.]+)/),
    sys: num(/System time \(seconds\): ([\d.]+)/),
    peak: num(/Maximum resident set size \(kbytes\): (\d+)/) * 1024,
  };
}

let running = null;
process.on('SIGINT', () => {
  if (running) {
    try { process.kill(-running.pid, 'SIGKILL'); } catch { /* already gone */ }
  }
  process.exit(130);
});

/** Runs one command; resolves with wall/cpu/peak and exit status, never rejects. */
function measure(label, command, commandArgs, logBase) {
  mkdirSync(dirname(logBase), { recursive: true });
  const timeFile = `${logBase}.time`;
  const outFd = openSync(`${logBase}.out`, 'w');
  const errFd = openSync(`${logBase}.err`, 'w');
  const argv = GNU_TIME ? ['-v', '-o', timeFile, command, ...commandArgs] : commandArgs;
  const started = process.hrtime.bigint();
  return new Promise((done) => {
    // Own process group, so a timeout or Ctrl-C can end the command together with anything it started.
    const child = spawn(GNU_TIME ?? command, argv, { cwd: ROOT, stdio: ['ignore', outFd, errFd], detached: true });
    running = child;
    let polled = { hwm: 0, cpu: 0, sys: 0 };
    const poll = GNU_TIME ? null : setInterval(() => {
      const p = readProc(child.pid);
      if (p) polled = { hwm: Math.max(polled.hwm, p.hwm), cpu: Math.max(polled.cpu, p.cpu), sys: Math.max(polled.sys, p.sys) };
    }, 20);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try { process.kill(-child.pid, 'SIGKILL'); } catch { /* already gone */ }
    }, timeoutMs);
    const finish = (code, signal, spawnError) => {
      running = null;
      const wall = Number(process.hrtime.bigint() - started) / 1e9;
      clearTimeout(timer);
      if (poll) clearInterval(poll);
      closeSync(outFd);
      closeSync(errFd);
      let { cpu, sys } = polled;
      let peak = polled.hwm;
      if (GNU_TIME && existsSync(timeFile)) ({ cpu, sys, peak } = parseGnuTime(readFileSync(timeFile, 'utf8')));
      const stderr = readFileSync(`${logBase}.err`, 'utf8');
      // GNU time reports a failed command through its own exit status; the child's exit is what matters.
      const exitCode = code ?? (signal ? 128 : 1);
      const ok = !spawnError && !timedOut && exitCode === 0;
      let error = null;
      if (spawnError) error = spawnError.message;
      else if (timedOut) error = `timed out after ${timeoutMs / 1000} s`;
      else if (!ok) error = `exit ${exitCode}${signal ? ` (${signal})` : ''}: ${lastLines(stderr, 4)}`;
      done({ label, ok, exitCode, error, wall, cpu, sys, peak, stderr });
    };
    child.on('error', (e) => finish(null, null, e));
    child.on('close', (code, signal) => finish(code, signal, null));
  });
}

function lastLines(text, n) {
  const lines = text.split('\n').map((l) => l.trim())
    .filter((l) => l && !/^at /.test(l) && !/^Node\.js v/.test(l) && !/^[\^}]+$/.test(l));
  // A Node crash prints the source line first and the error below it: the error line says the most.
  const error = lines.findLast((l) => /^([A-Z]\w*)?Error\b.*:/.test(l));
  return (error ?? lines.slice(-n).join(' | ')).slice(0, 600) || '(no stderr)';
}

function scanOutput(dir) {
  const out = { files: 0, bytes: 0, pbf: 0, json: 0 };
  const walk = (d) => {
    let entries;
    try { entries = readdirSync(d, { withFileTypes: true }); } catch { return; }
    for (const e of entries) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) {
        out.files++;
        out.bytes += statSync(p).size;
        if (e.name.endsWith('.pbf')) out.pbf++;
        // Descriptor and run report sit at the root; every other .json is a tile (or the overview tile).
        else if (e.name.endsWith('.json') && d !== dir) out.json++;
      }
    }
  };
  walk(dir);
  return out;
}

// ---------------------------------------------------------------- inputs

function sha1(file) {
  return createHash('sha1').update(readFileSync(file)).digest('hex').slice(0, 12);
}

async function ensureInput(cells) {
  mkdirSync(BENCH, { recursive: true });
  const genArgs = ['--cells', String(cells), '--seed', String(seed), '--nuclei', 'points', '--format', 'fc-minified'];
  const base = join(BENCH, `slide-${cells}-s${seed}`);
  const file = `${base}.json`;
  const metaFile = `${base}.meta.json`;
  const generator = sha1(GENERATOR);
  if (existsSync(file) && existsSync(metaFile)) {
    const meta = JSON.parse(readFileSync(metaFile, 'utf8'));
    if (meta.generator === generator && meta.args.join(' ') === genArgs.join(' ') && statSync(file).size === meta.bytes) {
      log(`input ${relative(ROOT, file)} (cached)`);
      return meta;
    }
  }
  log(`generating ${cells} cells into ${relative(ROOT, file)}...`);
  const tmp = `${file}.partial`;
  const run = await measure('generate', process.execPath, [GENERATOR, ...genArgs, '-o', tmp], join(BENCH, 'logs', `generate-${cells}`));
  if (!run.ok) throw new Error(`generator failed: ${run.error}`);
  renameSync(tmp, file);
  const summary = JSON.parse(run.stderr.trim().split('\n').pop());
  const meta = {
    file, args: genArgs, generator, bytes: statSync(file).size, cells: summary.cells, nuclei: summary.nuclei,
    features: summary.features, width: summary.width, height: summary.height,
    generateSeconds: round(run.wall, 2), generateMBps: round(statSync(file).size / 1e6 / run.wall, 1),
  };
  writeFileSync(metaFile, JSON.stringify(meta, null, 2) + '\n');
  log(`generated ${meta.features} features, ${(meta.bytes / 1e6).toFixed(1)} MB in ${meta.generateSeconds} s`);
  return meta;
}

/** Finest zoom where a tile spans at most 512 image pixels: the build's own default, passed to both sides. */
function maxZoomFor(meta) {
  const world = 2 ** Math.ceil(Math.log2(Math.max(meta.width, meta.height)));
  return Math.max(0, Math.log2(world / 512));
}

// ---------------------------------------------------------------- runs

// A one-core run (taskset -c 0) gives the textbook single-processor time that a parallel speedup is measured against:
// `--workers 1` alone still reads and writes on the main thread beside its worker, on the other core.
const TASKSET = spawnSync('taskset', ['-c', '0', 'true']).status === 0 ? 'taskset' : null;

/** GDAL's MVT writer when `ogr2ogr` is on the PATH (Debian `gdal-bin`), else null. */
const OGR2OGR = (() => {
  const r = spawnSync('ogr2ogr', ['--version'], { encoding: 'utf8' });
  return r.status === 0 ? 'ogr2ogr' : null;
})();

/** Cases of our build: into a directory (`ours`) or, PBF only, into one PMTiles archive (`archive`). */
const OURS = new Set(['ours', 'archive']);

/** What one case runs: our build at a worker count, the naive script (both formats or PBF only), or GDAL's MVT writer, on one input. */
function prepareCase({ kind, workers, meta, maxZoom, oneCore = false }) {
  const label = kind === 'ours' ? `ours W=${workers}${oneCore ? ', one core' : ''}` : kind === 'archive' ? `ours W=${workers}, PBF into one archive`
    : kind === 'gdal' ? 'GDAL ogr2ogr -f MVT (PBF only)' : kind === 'naive-pbf' ? 'naive, PBF only' : 'naive';
  const slug = kind === 'ours' ? `ours-w${workers}${oneCore ? '-1core' : ''}` : kind === 'archive' ? `archive-w${workers}` : kind;
  const outDir = join(BENCH, 'out', `${meta.cells}`, slug);
  const zoomArgs = ['--min-zoom', '0', '--max-zoom', String(maxZoom)];
  let command = process.execPath;
  let commandArgs;
  if (kind === 'naive') commandArgs = [NAIVE, meta.file, outDir, ...zoomArgs];
  else if (kind === 'naive-pbf') commandArgs = [NAIVE, meta.file, outDir, ...zoomArgs, '--format', 'pbf'];
  else if (OURS.has(kind)) {
    const out = kind === 'archive' ? join(outDir, 'slide.pmtiles') : outDir;
    commandArgs = [CLI, 'build', meta.file, '-o', out, '--force', '--workers', String(workers), ...zoomArgs, '--progress', 'none', ...args['build-arg']];
  }
  else {
    // The pixel world (side = 512 px × 2^maxZoom, as our default) as a square CRS extent whose top-left is the tile
    // origin. GDAL counts tile rows down from the top of a y-up CRS, so the pyramid comes out mirrored in y: the same
    // tiles' worth of work. GDAL writes PBF tiles (and metadata.json) only, no JSON tiles.
    const side = 512 * 2 ** maxZoom;
    command = OGR2OGR;
    commandArgs = ['-f', 'MVT', outDir, meta.file, '-a_srs', 'EPSG:3857', '-nln', 'slide', '-dsco', 'FORMAT=DIRECTORY', '-dsco', 'COMPRESS=NO',
      '-dsco', 'MINZOOM=0', '-dsco', `MAXZOOM=${maxZoom}`, '-dsco', `TILING_SCHEME=EPSG:3857,0,${side},${side}`];
  }
  if (oneCore) {
    commandArgs = ['-c', '0', command, ...commandArgs];
    command = TASKSET;
  }
  const base = { label, kind, workers: OURS.has(kind) ? workers : 1, cells: meta.cells, features: meta.features,
    inputBytes: meta.bytes, maxZoom, command: [command === process.execPath ? 'node' : command, ...commandArgs.map((a) => (a === process.execPath ? 'node' : a.startsWith(ROOT) ? relative(ROOT, a) : a))].join(' ') };
  return { kind, meta, slug, outDir, command, commandArgs, base, attempts: [] };
}

/** Runs a case once more (unless it already failed) and keeps the attempt. */
async function runAttempt(c) {
  const { kind, meta, slug, outDir, base } = c;
  if (c.attempts.some((a) => !a.ok)) return;
  const i = c.attempts.length;
  if (OURS.has(kind) && !existsSync(CLI)) {
    c.attempts.push({ ok: false, wall: 0, error: `${relative(ROOT, CLI)} not found: the build command is not there yet (or \`npm run build\` did not produce it)` });
    return;
  }
  rmSync(outDir, { recursive: true, force: true });
  log(`${base.label} @ ${meta.cells} cells, zooms 0-${base.maxZoom}${repeat > 1 ? `, run ${i + 1}/${repeat}` : ''}...`);
  const r = await measure(base.label, c.command, c.commandArgs, join(BENCH, 'logs', `${meta.cells}-${slug}-${i + 1}`));
  const scanned = r.ok ? scanOutput(outDir) : null;
  let buildReport = null;
  const reportFile = join(outDir, kind === 'archive' ? 'slide.build-report.json' : 'build-report.json');
  if (r.ok && OURS.has(kind) && existsSync(reportFile)) {
    try { buildReport = JSON.parse(readFileSync(reportFile, 'utf8')); } catch { /* optional */ }
  }
  // An archive holds its tiles: count them from the run report.
  if (scanned && kind === 'archive' && buildReport) scanned.pbf = Object.values(buildReport.tiles.byZoom).reduce((n, z) => n + z.pbf.tiles, 0);
  c.attempts.push({ ...r, scanned, buildReport });
  if (!args.keep) rmSync(outDir, { recursive: true, force: true });
  log(r.ok ? `${base.label} @ ${meta.cells}: ${round(r.wall, 2)} s wall, ${round(r.cpu, 2)} s cpu, ${round(r.peak / MiB, 0)} MiB`
    : `${base.label} @ ${meta.cells}: FAILED after ${round(r.wall, 2)} s: ${r.error}`);
}

/** The case's result: its median attempt by wall time, or its failure. */
function summarize(c) {
  const { kind, meta, base, attempts } = c;
  const failed = attempts.find((a) => !a.ok);
  const chosen = failed ?? attempts.slice().sort((a, b) => a.wall - b.wall)[Math.floor(attempts.length / 2)];
  const result = {
    ...base, ok: chosen.ok, error: chosen.error, exitCode: chosen.exitCode,
    wall: round(chosen.wall, 2), cpu: round(chosen.cpu, 2), sys: round(chosen.sys, 2), peakMiB: chosen.peak == null ? null : round(chosen.peak / MiB, 0),
    cores: chosen.ok ? round(chosen.cpu / chosen.wall, 2) : null,
    tiles: chosen.scanned?.pbf ?? null, jsonTiles: chosen.scanned?.json ?? null, files: chosen.scanned?.files ?? null,
    bytesWritten: chosen.scanned?.bytes ?? null,
    featuresPerSecond: chosen.ok ? Math.round(meta.features / chosen.wall) : null,
    inputMBps: chosen.ok ? round(meta.bytes / 1e6 / chosen.wall, 1) : null,
    walls: attempts.map((a) => round(a.wall, 2)),
  };
  if (chosen.buildReport) result.buildReport = chosen.buildReport;
  if (kind === 'naive' && chosen.ok) {
    try { result.naiveSummary = JSON.parse(chosen.stderr.trim().split('\n').pop()); } catch { /* optional */ }
  }
  return result;
}

function round(v, digits) {
  const f = 10 ** digits;
  return Number.isFinite(v) ? Math.round(v * f) / f : null;
}

// ---------------------------------------------------------------- report

function fmt(v, digits = 1) {
  if (v == null) return '–';
  return typeof v === 'number' ? v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }) : String(v);
}

function table(results) {
  const rows = [
    '| cells | run | wall s | cpu s | sys s | cores used | peak MiB | tiles | files | MB written | features/s | input MB/s | status |',
    '|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
  ];
  for (const r of results) {
    rows.push(`| ${r.cells.toLocaleString('en-US')} | ${r.label} | ${fmt(r.wall, 2)} | ${fmt(r.cpu, 2)} | ${fmt(r.sys, 2)} | ${fmt(r.cores, 2)} | ${fmt(r.peakMiB, 0)} | `
      + `${fmt(r.tiles, 0)} | ${fmt(r.files, 0)} | ${r.bytesWritten == null ? '–' : fmt(r.bytesWritten / 1e6, 1)} | `
      + `${fmt(r.featuresPerSecond, 0)} | ${fmt(r.inputMBps, 1)} | ${r.ok ? 'ok' : `failed: ${r.error.replace(/\|/g, '/')}`} |`);
  }
  return rows.join('\n');
}

function ratios(results) {
  const find = (cells, label) => results.find((r) => r.cells === cells && r.label === label && r.ok);
  const lines = [];
  const top = Math.max(...workerCounts);
  const small = Math.min(...sizes);
  const out = {};
  const naive = find(small, 'naive');
  const oursTop = find(small, `ours W=${top}`);
  if (naive && oursTop) {
    out.naiveOverOurs = round(naive.wall / oursTop.wall, 2);
    lines.push(`- naive / ours (W=${top}) wall at ${small.toLocaleString('en-US')} cells: **×${out.naiveOverOurs}** (target ≥ 3); `
      + `peak memory ${naive.peakMiB} MiB vs ${oursTop.peakMiB} MiB`);
  } else {
    lines.push(`- naive / ours (W=${top}) at ${small.toLocaleString('en-US')} cells: n/a (${!naive ? 'no naive run' : 'our build failed'})`);
  }
  for (const r of results.filter((x) => x.kind === 'gdal' && x.ok)) {
    const ours = find(r.cells, `ours W=${top}`);
    if (!ours) continue;
    (out.gdalOverOurs ??= {})[r.cells] = round(r.wall / ours.wall, 2);
    lines.push(`- GDAL / ours (W=${top}) wall at ${r.cells.toLocaleString('en-US')} cells: **×${out.gdalOverOurs[r.cells]}** `
      + `(GDAL writes PBF only; peak ${r.peakMiB} MiB vs ${ours.peakMiB} MiB)`);
  }
  if (workerCounts.includes(1) && top > 1) {
    out.speedup = {};
    for (const n of sizes) {
      const w1 = find(n, 'ours W=1');
      const wt = find(n, `ours W=${top}`);
      if (w1 && wt) out.speedup[n] = round(w1.wall / wt.wall, 2);
      lines.push(`- W=1 / W=${top} speedup at ${n.toLocaleString('en-US')} cells: `
        + (w1 && wt ? `**×${out.speedup[n]}** (target ≥ 1.7); cores used ${w1.cores} (W=1) and ${wt.cores} (W=${top})` : 'n/a (our build failed)'));
    }
  }
  for (const n of sizes) {
    const archive = find(n, `ours W=${top}, PBF into one archive`);
    const naivePbf = find(n, 'naive, PBF only');
    if (!archive) continue;
    (out.archive ??= {})[n] = { naivePbfOverArchive: naivePbf ? round(naivePbf.wall / archive.wall, 2) : null, sysShare: round(archive.sys / archive.wall, 3) };
    lines.push(`- archive (W=${top}, PBF into one file) at ${n.toLocaleString('en-US')} cells: naive PBF to a directory / ours `
      + `**×${out.archive[n].naivePbfOverArchive ?? '–'}** (target ≥ 5); system time ${fmt(archive.sys, 2)} s, `
      + `**${fmt(100 * out.archive[n].sysShare, 1)}%** of wall (target < 10%); peak ${archive.peakMiB} MiB`);
  }
  const oneCore = find(small, 'ours W=1, one core');
  if (oneCore && oursTop) {
    out.oneCoreSpeedup = round(oneCore.wall / oursTop.wall, 2);
    lines.push(`- one core (W=1 under taskset -c 0) / W=${top} at ${small.toLocaleString('en-US')} cells: **×${out.oneCoreSpeedup}** `
      + `(speedup over a single-processor run; W=1 alone already uses ${find(small, 'ours W=1')?.cores ?? '–'} cores)`);
  }
  out.throughput = {};
  for (const large of sizes.filter((n) => n !== small)) {
    const a = find(small, `ours W=${top}`);
    const b = find(large, `ours W=${top}`);
    if (a && b) out.throughput[large] = round(b.featuresPerSecond / a.featuresPerSecond, 2);
    lines.push(`- throughput (features/s, W=${top}) at ${large.toLocaleString('en-US')} vs ${small.toLocaleString('en-US')} cells: `
      + (a && b ? `**${Math.round(out.throughput[large] * 100)}%** (target ≥ 85%); peak ${b.peakMiB} MiB (budget 1024)` : 'n/a (our build failed)'));
  }
  return { lines: lines.join('\n'), values: out };
}

function machine() {
  const c = cpus();
  return {
    cpus: c.length, cpuModel: c[0]?.model?.trim() ?? 'unknown', memGiB: round(totalmem() / 2 ** 30, 1),
    node: process.version, platform: `${process.platform} ${process.arch}`,
    loadAverage: loadavg().map((l) => round(l, 2)), timeTool: GNU_TIME ? 'GNU time -v' : '/proc polling (20 ms)',
  };
}

// ---------------------------------------------------------------- main

async function main() {
  const started = new Date();
  const host = machine();
  log(`machine: ${host.cpus} × ${host.cpuModel}, ${host.memGiB} GiB, node ${host.node}, load ${host.loadAverage.join(' ')}; `
    + `measuring with ${host.timeTool}`);
  const results = [];
  const inputs = [];
  for (const cells of sizes) {
    const meta = await ensureInput(cells);
    inputs.push({ ...meta, file: relative(ROOT, meta.file) });
    const maxZoom = maxZoomFor(meta);
    const cases = workerCounts.map((workers) => prepareCase({ kind: 'ours', workers, meta, maxZoom }));
    if (TASKSET && !args['skip-one-core'] && cells === Math.min(...sizes)) cases.push(prepareCase({ kind: 'ours', workers: 1, meta, maxZoom, oneCore: true }));
    // The naive script needs the whole file as one string: at 1M cells (~800 MB) V8 refuses, and that
    // failure is itself the result, so it is run and recorded rather than skipped.
    if (!args['skip-naive']) cases.push(prepareCase({ kind: 'naive', meta, maxZoom }));
    if (args.archive) {
      cases.push(prepareCase({ kind: 'archive', workers: Math.max(...workerCounts), meta, maxZoom }));
      if (!args['skip-naive']) cases.push(prepareCase({ kind: 'naive-pbf', meta, maxZoom }));
    }
    if (args.gdal) {
      if (OGR2OGR) cases.push(prepareCase({ kind: 'gdal', meta, maxZoom }));
      else log('--gdal: ogr2ogr is not on the PATH (apt-get install gdal-bin); skipped');
    }
    // Repeats go round the cases, so a slow spell of a shared machine does not land on one case only.
    for (let i = 0; i < repeat; i++) for (const c of cases) await runAttempt(c);
    results.push(...cases.map(summarize));
  }
  const r = ratios(results);
  const md = [
    `## Benchmark (${started.toISOString().slice(0, 16).replace('T', ' ')} UTC)`,
    '',
    `Machine: ${host.cpus} × ${host.cpuModel}, ${host.memGiB} GiB RAM, Node ${host.node}, ${host.platform}; `
      + `load average at start ${host.loadAverage.join(' / ')}. Peak RSS and CPU (user + sys) from ${host.timeTool}.`,
    `Inputs: ${inputs.map((i) => `${i.cells.toLocaleString('en-US')} cells + ${i.nuclei.toLocaleString('en-US')} nucleus points `
      + `(${(i.bytes / 1e6).toFixed(1)} MB minified FeatureCollection, ${i.width} × ${i.height} px)`).join('; ')}. `
      + `Zooms 0 to ${sizes.map((n) => maxZoomFor(inputs.find((i) => i.cells === n))).join(' / ')}; JSON and PBF tiles.`,
    '',
    table(results),
    '',
    r.lines,
    '',
  ].join('\n');
  process.stdout.write('\n' + md);
  mkdirSync(BENCH, { recursive: true });
  writeFileSync(join(BENCH, `${args.out}.md`), md);
  writeFileSync(join(BENCH, `${args.out}.json`), JSON.stringify({ started: started.toISOString(), machine: host, inputs, results, ratios: r.values }, null, 2) + '\n');
  log(`wrote ${relative(ROOT, join(BENCH, `${args.out}.md`))} and ${args.out}.json`);
  // Our build failing is a failed benchmark; the naive script failing is an expected finding.
  return results.some((x) => OURS.has(x.kind) && !x.ok) ? 1 : 0;
}

main().then(
  (code) => { process.exitCode = code; },
  (err) => { log(`error: ${err.stack ?? err.message}`); process.exitCode = 2; },
);
