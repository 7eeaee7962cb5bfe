// Benchmark harness (issues 4 and 13): generates synthetic slides once, times our build against the naive script in
// alternating runs, and prints (and writes into the README's bench section) the table of wall, user and system time.
//
// Usage (via `npm run bench`, which builds first): node bench/run.js [--quick] [--shapes dense,real100k,real1m]
//   [--repeat N (default 3, the 100,000-cell cases)] [--repeat-large N (default 1, the 1,000,000-cell cases)]
//   [--skip-naive] [--skip-archive] [--no-readme] [--out NAME (.bench/NAME.md/json, default results)] [--workers 2] [--seed 1]
//   [--keep] [--timeout SECONDS] [--build-arg ARG ...] [--cli PATH (another build's bin/mudm-tiles.js)] [--poll]
//   [--tippecanoe PATH (a tippecanoe binary: README *Performance* says how to build one)]
// Shapes: `dense`, 100,000 cells on 11,619 × 7,746 px (minified, zooms 0–5: the case of issue 4); `real100k`,
// 100,000 cells over 100,000 × 100,000 px (pretty-printed, zooms 0–8); `real1m`, 1,000,000 cells over
// 316,000 × 316,000 px (pretty-printed, zooms 0–10), each format alone and both. Every cell has a nucleus point.
// On the real shapes also (issue 14): ours writing PBF into one PMTiles archive (`-o slide.pmtiles`), and at 100,000
// cells the naive script writing PBF only into a directory (`--skip-archive` drops both).
// `--quick`: real100k only. Inputs are cached in .bench/ by shape, seed and generator.
// With `--tippecanoe`, on both real shapes also tippecanoe writing its PBF pyramid into one PMTiles archive,
// with its own defaults (gzip, dropping points at coarse zooms), from the slide as it reads it fastest (one feature per
// line for `-P`, pixels mapped onto the Web Mercator square so its tiles are ours: bench/tippecanoe-input.js).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync,
} from 'node:fs';
import { cpus, totalmem, loadavg } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { archiveTiles, gnuTime, headerTiles, measure as measureRun, scanOutput } from './measure.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BENCH = join(ROOT, '.bench');
const GENERATOR = join(ROOT, 'bench', 'generate.js');
const NAIVE = join(ROOT, 'bench', 'naive.js');
const PARSE_FLOOR = join(ROOT, 'bench', 'parse-floor.js');
const TIPPECANOE_INPUT = join(ROOT, 'bench', 'tippecanoe-input.js');
const README = join(ROOT, 'README.md');
const MiB = 1024 * 1024;

const OPTIONS = {
  quick: { type: 'boolean' },
  shapes: { type: 'string', default: 'dense,real100k,real1m' },
  'skip-naive': { type: 'boolean' },
  'skip-archive': { type: 'boolean' },
  'no-readme': { type: 'boolean' },
  out: { type: 'string', default: 'results' },
  workers: { type: 'string', default: '2' },
  seed: { type: 'string', default: '1' },
  repeat: { type: 'string', default: '3' },
  'repeat-large': { type: 'string', default: '1' },
  keep: { type: 'boolean' },
  timeout: { type: 'string', default: '3600' },
  'build-arg': { type: 'string', multiple: true, default: [] },
  cli: { type: 'string' },
  poll: { type: 'boolean' },
  tippecanoe: { type: 'string' },
};
/** The usage in this file's opening comment, for --help and a mistyped option. */
function usage() {
  const text = readFileSync(fileURLToPath(import.meta.url), 'utf8');
  return text.slice(text.indexOf('// Usage'), text.indexOf('\nimport ')).replace(/^\/\/ ?/gm, '');
}
let parsed;
try {
  parsed = parseArgs({ args: process.argv.slice(2), options: { ...OPTIONS, help: { type: 'boolean', short: 'h' } } });
} catch (err) {
  process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n\n${usage()}`);
  process.exit(2);
}
if (parsed.values.help) {
  process.stdout.write(usage());
  process.exit(0);
}
const args = parsed.values;

/** The slides: generator arguments, whether the naive script runs on it, and our runs (formats). */
const SHAPES = {
  dense: {
    cells: 100000, title: '100,000 cells, dense (11,619 × 7,746 px, minified)', gen: ['--format', 'fc-minified'],
    naive: true, formats: ['json,pbf'],
  },
  real100k: {
    cells: 100000, title: '100,000 cells over 100,000 × 100,000 px (pretty-printed)', gen: ['--format', 'fc-pretty', '--width', '100000', '--height', '100000'],
    naive: true, formats: ['json,pbf'], archive: true, tippecanoe: true,
  },
  real1m: {
    cells: 1000000, title: '1,000,000 cells over 316,000 × 316,000 px (pretty-printed)', gen: ['--format', 'fc-pretty', '--width', '316000', '--height', '316000'],
    // The naive script reads the whole file as one string: V8 refuses one over 512 Mi characters (this one is 2.8 GB).
    naive: false, formats: ['json,pbf', 'json', 'pbf'], archive: true, tippecanoe: true,
  },
};
/** The options of this run that change what it measures, as typed after `npm run bench --`. */
function commandArgs() {
  const given = args.quick ? ['--quick'] : [];
  for (const name of [...(args.quick ? [] : ['shapes']), 'repeat', 'repeat-large', 'workers']) {
    if (args[name] !== OPTIONS[name].default) given.push(`--${name} ${args[name]}`);
  }
  if (args.tippecanoe) given.push('--tippecanoe PATH');
  return given.length > 0 ? ` -- ${given.join(' ')}` : '';
}

const shapeNames = args.quick ? ['real100k'] : args.shapes.split(',').map((s) => s.trim());
const workers = Number(args.workers);
const seed = Number(args.seed);
const timeoutMs = Number(args.timeout) * 1000;
if (shapeNames.some((s) => !SHAPES[s]) || !(Number.isSafeInteger(workers) && workers >= 1)) {
  process.stderr.write(`bench: --shapes takes ${Object.keys(SHAPES).join(', ')}; --workers a positive integer\n`);
  process.exit(2);
}

const CLI = args.cli ? resolve(args.cli) : join(ROOT, 'bin', 'mudm-tiles.js');
const GNU_TIME = gnuTime(args.poll);
/** `measure` of measure.js, in the checkout, with this run's bound and time tool. */
const measure = (label, command, commandArgs, logBase) => measureRun(label, command, commandArgs, logBase, { cwd: ROOT, timeoutMs, time: GNU_TIME });
const log = (msg) => process.stderr.write(`bench: ${msg}\n`);

// ---------------------------------------------------------------- inputs

function sha1(file) {
  return createHash('sha1').update(readFileSync(file)).digest('hex').slice(0, 12);
}

/** The shape's slide, generated once and cached; with its parse floor (measured once, on one core, kept in the meta). */
async function ensureInput(name) {
  const shape = SHAPES[name];
  mkdirSync(BENCH, { recursive: true });
  const genArgs = ['--cells', String(shape.cells), '--seed', String(seed), '--nuclei', 'points', ...shape.gen];
  const base = join(BENCH, `slide-${name}-s${seed}`);
  const file = `${base}.json`;
  const metaFile = `${base}.meta.json`;
  const generator = sha1(GENERATOR);
  let meta = null;
  if (existsSync(file) && existsSync(metaFile)) {
    const m = JSON.parse(readFileSync(metaFile, 'utf8'));
    // The checkout may have moved since: the input is the file here.
    if (m.generator === generator && m.args.join(' ') === genArgs.join(' ') && statSync(file).size === m.bytes) meta = { ...m, file };
  }
  if (meta) log(`input ${relative(ROOT, file)} (cached)`);
  else {
    log(`generating ${name} into ${relative(ROOT, file)}...`);
    const tmp = `${file}.partial`;
    const run = await measure('generate', process.execPath, [GENERATOR, ...genArgs, '-o', tmp], join(BENCH, 'logs', `generate-${name}`));
    if (!run.ok) throw new Error(`generator failed: ${run.error}`);
    renameSync(tmp, file);
    const summary = JSON.parse(run.stderr.trim().split('\n').pop());
    meta = {
      file, args: genArgs, generator, bytes: statSync(file).size, cells: summary.cells, nuclei: summary.nuclei,
      features: summary.features, width: summary.width, height: summary.height, generateSeconds: round(run.wall, 2),
    };
    log(`generated ${meta.features} features, ${(meta.bytes / 1e6).toFixed(1)} MB in ${meta.generateSeconds} s`);
  }
  if (meta.parseFloor === undefined) {
    log(`parse floor of ${relative(ROOT, file)} (JSON.parse on one core)...`);
    const r = spawnSync('taskset', ['-c', '0', process.execPath, PARSE_FLOOR, file], { encoding: 'utf8' });
    const plain = r.status === 0 ? r : spawnSync(process.execPath, [PARSE_FLOOR, file], { encoding: 'utf8' });
    if (plain.status === 0) meta.parseFloor = JSON.parse(plain.stdout.trim()).parseSeconds;
  }
  writeFileSync(metaFile, JSON.stringify(meta, null, 2) + '\n');
  return { ...meta, shape: name };
}

/** The slide as tippecanoe reads it (see the header), made once per input and kept beside it. */
async function tippecanoeInput(meta) {
  const file = meta.file.replace(/\.json$/, '.tippecanoe.ndjson');
  const stamp = `${file}.source`;
  const source = `${meta.bytes} ${sha1(TIPPECANOE_INPUT)}`;
  if (existsSync(file) && existsSync(stamp) && readFileSync(stamp, 'utf8') === source) return file;
  log(`writing ${relative(ROOT, file)} for tippecanoe...`);
  const run = await measure('tippecanoe input', process.execPath, [TIPPECANOE_INPUT, meta.file, file, String(meta.width), String(meta.height)], join(BENCH, 'logs', `tippecanoe-input-${meta.shape}`));
  if (!run.ok) throw new Error(`tippecanoe input failed: ${run.error}`);
  writeFileSync(stamp, source);
  return file;
}

/** Finest zoom where a tile spans at most 512 image pixels: the build's own default, passed to both sides. */
function maxZoomFor(meta) {
  const world = 2 ** Math.ceil(Math.log2(Math.max(meta.width, meta.height)));
  return Math.max(0, Math.log2(world / 512));
}

// ---------------------------------------------------------------- runs

/** Our build's cases: into a directory (`ours`), or PBF into one PMTiles archive (`archive`); `tippecanoe` is tippecanoe's. */
const OURS = new Set(['ours', 'archive']);

/** One case on one input: our build with some formats or into an archive, or the naive script (both formats or PBF only). */
function prepareCase({ kind, meta, maxZoom, formats, tippecanoe }) {
  const label = kind === 'naive' ? 'naive script, JSON + PBF' : kind === 'naive-pbf' ? 'naive script, PBF only'
    : kind === 'tippecanoe' ? `tippecanoe ${tippecanoe.version}, PBF into one archive (its defaults: gzip, points dropped at coarse zooms)`
    : kind === 'archive' ? `mudm-tiles W=${workers}, PBF into one archive` : `mudm-tiles W=${workers}, ${formats === 'json,pbf' ? 'JSON + PBF' : formats.toUpperCase()}`;
  const slug = kind === 'ours' ? `ours-w${workers}-${formats.replace(',', '-')}` : kind;
  const outDir = join(BENCH, 'out', meta.shape, slug);
  const zoomArgs = ['--min-zoom', '0', '--max-zoom', String(maxZoom)];
  const ours = (out, fmt) => [CLI, 'build', meta.file, '-o', out, '--force', '--workers', String(workers), '--format', fmt, ...zoomArgs, '--progress', 'none', ...args['build-arg']];
  const commandArgs = kind === 'tippecanoe' ? ['-o', join(outDir, 'slide.pmtiles'), '-Z0', `-z${maxZoom}`, '-s', 'EPSG:3857', '-l', 'cells', '-P', '--force', '-q', tippecanoe.input]
    : kind === 'naive' ? [NAIVE, meta.file, outDir, ...zoomArgs]
    : kind === 'naive-pbf' ? [NAIVE, meta.file, outDir, ...zoomArgs, '--format', 'pbf']
    : kind === 'archive' ? ours(join(outDir, 'slide.pmtiles'), 'pbf') : ours(outDir, formats);
  const base = {
    shape: meta.shape, label, kind, formats: kind === 'naive' ? 'json,pbf' : kind === 'ours' ? formats : 'pbf', cells: meta.cells, features: meta.features, maxZoom,
    command: [kind === 'tippecanoe' ? 'tippecanoe' : 'node', ...commandArgs.map((a) => (a.startsWith(ROOT) ? relative(ROOT, a) : a))].join(' '),
  };
  if (kind === 'tippecanoe') mkdirSync(outDir, { recursive: true });
  return { kind, meta, slug, outDir, command: kind === 'tippecanoe' ? tippecanoe.bin : process.execPath, commandArgs, base, attempts: [] };
}

/** Runs a case once more (unless it already failed) and keeps the attempt. */
async function runAttempt(c) {
  const { kind, meta, slug, outDir, base } = c;
  if (c.attempts.some((a) => !a.ok)) return;
  const i = c.attempts.length;
  if (OURS.has(kind) && !existsSync(CLI)) {
    c.attempts.push({ ok: false, wall: 0, error: `${relative(ROOT, CLI)} not found (run \`npm run build\`)` });
    return;
  }
  rmSync(outDir, { recursive: true, force: true });
  // tippecanoe makes its file, not the folder it goes in.
  if (kind === 'tippecanoe') mkdirSync(outDir, { recursive: true });
  log(`${base.label} @ ${meta.shape}, zooms 0-${base.maxZoom}, run ${i + 1}...`);
  const r = await measure(base.label, c.command, c.commandArgs, join(BENCH, 'logs', `${meta.shape}-${slug}-${i + 1}`));
  const scanned = r.ok ? scanOutput(outDir) : null;
  // An archive holds its tiles: they are counted from the run report beside it.
  if (scanned && kind === 'archive') scanned.pbf = archiveTiles(join(outDir, 'slide.build-report.json'));
  if (scanned && kind === 'tippecanoe') scanned.pbf = headerTiles(join(outDir, 'slide.pmtiles'));
  c.attempts.push({ ...r, stderr: undefined, scanned });
  // Deleted after the last timing, not now: for minutes after a tree of many files is deleted, ext4 skips its
  // recently freed inodes when it makes new files, which tripled the system time of the next run (9 s → 39 s).
  if (existsSync(outDir)) renameSync(outDir, `${outDir}.run${i + 1}`);
  log(r.ok ? `${base.label} @ ${meta.shape}: ${round(r.wall, 2)} s wall, ${round(r.user, 2)} s user, ${round(r.sys, 2)} s sys, ${round(r.peak / MiB, 0)} MiB`
    : `${base.label} @ ${meta.shape}: FAILED after ${round(r.wall, 2)} s: ${r.error}`);
}

function median(values) {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  return v.length ? v[Math.floor(v.length / 2)] : null;
}

/** The case's result: the median of each figure over its attempts (or its failure). */
function summarize(c) {
  const { base, attempts } = c;
  const failed = attempts.find((a) => !a.ok);
  const ok = attempts.filter((a) => a.ok);
  const med = (f) => median(ok.map(f));
  const wall = med((a) => a.wall);
  const user = med((a) => a.user);
  const sys = med((a) => a.sys);
  return {
    ...base, ok: !failed, error: failed?.error ?? null, runs: attempts.length,
    wall: round(wall, 2), user: round(user, 2), sys: round(sys, 2), cores: failed ? null : round((user + sys) / wall, 2),
    peakMiB: failed ? null : round(Math.max(...ok.map((a) => a.peak)) / MiB, 0),
    tiles: ok[0]?.scanned ? ok[0].scanned.pbf + ok[0].scanned.json : null, files: ok[0]?.scanned?.files ?? null,
    walls: attempts.map((a) => round(a.wall, 2)), users: attempts.map((a) => round(a.user, 2)), syss: attempts.map((a) => round(a.sys, 2)),
  };
}

function round(v, digits) {
  const f = 10 ** digits;
  return Number.isFinite(v) ? Math.round(v * f) / f : null;
}

// ---------------------------------------------------------------- report

function fmt(v, digits = 1) {
  if (v == null) return '–';
  return v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

function table(results, inputs) {
  const rows = [
    '| slide | run | wall s | user s | sys s | cores used | peak MiB | tiles | files | runs (walls s) | status |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|',
  ];
  for (const r of results) {
    rows.push(`| ${SHAPES[r.shape].title}, zooms 0–${r.maxZoom} | ${r.label} | ${fmt(r.wall, 2)} | ${fmt(r.user, 2)} | ${fmt(r.sys, 2)} | ${fmt(r.cores, 2)} | `
      + `${fmt(r.peakMiB, 0)} | ${fmt(r.tiles, 0)} | ${fmt(r.files, 0)} | ${r.runs} (${r.walls.join(', ')}) | ${r.ok ? 'ok' : `failed: ${r.error.replace(/\|/g, '/')}`} |`);
  }
  for (const i of inputs) {
    rows.push(`| ${SHAPES[i.shape].title} | parse floor: JSON.parse of the ${(i.bytes / 1e6).toFixed(0)} MB input, one core | – | ${fmt(i.parseFloor, 2)} | – | 1.00 | – | – | – | 1 | ok |`);
  }
  return rows.join('\n');
}

/** The issue's targets, checked against the figures of this run. */
function targets(results, inputs) {
  const find = (shape, pred) => results.find((r) => r.shape === shape && r.ok && pred(r));
  const lines = [];
  const out = {};
  for (const shape of ['dense', 'real100k', 'real1m']) {
    const naive = find(shape, (r) => r.kind === 'naive');
    const ours = find(shape, (r) => r.kind === 'ours' && r.formats === 'json,pbf');
    const archive = find(shape, (r) => r.kind === 'archive');
    const naivePbf = find(shape, (r) => r.kind === 'naive-pbf');
    const tippecanoe = find(shape, (r) => r.kind === 'tippecanoe');
    if (archive && tippecanoe) {
      const t = { tippecanoeOverArchive: round(tippecanoe.wall / archive.wall, 2) };
      out[`${shape}Tippecanoe`] = t;
      lines.push(`- ${SHAPES[shape].title}, PBF into one archive: tippecanoe / ours wall **×${t.tippecanoeOverArchive}**; `
        + `system time ${tippecanoe.sys} s vs ${archive.sys} s; peak ${tippecanoe.peakMiB} vs ${archive.peakMiB} MiB`);
    }
    if (archive && naivePbf) {
      const a = { naivePbfOverArchive: round(naivePbf.wall / archive.wall, 2), sysShare: round(archive.sys / archive.wall, 3) };
      out[`${shape}Archive`] = a;
      lines.push(`- ${SHAPES[shape].title}, PBF: naive script into a directory / ours into one archive wall **×${a.naivePbfOverArchive}** (target ≥ 5); `
        + `system time ${archive.sys} s, **${fmt(100 * a.sysShare, 1)}%** of wall (target < 10%); peak ${archive.peakMiB} MiB`);
    }
    if (!naive || !ours) continue;
    const speed = round(naive.wall / ours.wall, 2), cpu = round(ours.user / naive.user, 2);
    out[shape] = { naiveOverOurs: speed, userOursOverNaive: cpu };
    lines.push(`- ${SHAPES[shape].title}: naive / ours wall **×${speed}** (target ≥ 3); ours / naive user CPU **×${cpu}** (target ≤ 0.8); `
      + `system time ${ours.sys} s vs ${naive.sys} s; peak ${ours.peakMiB} vs ${naive.peakMiB} MiB`);
  }
  const floor = inputs.find((i) => i.shape === 'real1m')?.parseFloor;
  const largeArchive = find('real1m', (r) => r.kind === 'archive');
  if (largeArchive) {
    const a = { overParseFloor: floor ? round(largeArchive.wall / floor, 2) : null, peakMiB: largeArchive.peakMiB };
    out.real1mArchive = a;
    lines.push(`- ${SHAPES.real1m.title}, PBF into one archive: wall ${largeArchive.wall} s = **×${a.overParseFloor ?? '–'}** the parse floor `
      + `(target ≤ 6); peak RSS **${a.peakMiB} MiB** (target < 1,024); system time ${largeArchive.sys} s`);
  }
  const large = results.filter((r) => r.shape === 'real1m' && r.kind === 'ours');
  if (large.length) {
    out.real1m = Object.fromEntries(large.map((r) => [r.formats, { peakMiB: r.peakMiB, wall: r.wall }]));
    lines.push(`- ${SHAPES.real1m.title}: peak RSS ${large.map((r) => `${r.formats === 'json,pbf' ? 'JSON + PBF' : r.formats.toUpperCase()} **${r.peakMiB ?? '–'} MiB**`).join(', ')} `
      + `(target ≤ 768 with the default budget); wall ${large.map((r) => `${r.wall ?? '–'} s`).join(' / ')} against a parse floor of ${floor ?? '–'} s of CPU`);
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

/** Replaces what lies between the README's bench markers with `md`. */
function writeReadme(md) {
  const text = readFileSync(README, 'utf8');
  const a = text.indexOf('<!-- bench:start -->'), b = text.indexOf('<!-- bench:end -->');
  if (a < 0 || b < a) { log('README.md has no bench markers; not written'); return; }
  writeFileSync(README, `${text.slice(0, a)}<!-- bench:start -->\n${md}\n${text.slice(b)}`);
  log('wrote the table into README.md (between the bench markers)');
}

// ---------------------------------------------------------------- main

/** Removes every run's output (or, with --keep, leaves them under .bench/out). */
function removeOutputs() {
  if (!args.keep) rmSync(join(BENCH, 'out'), { recursive: true, force: true });
}

async function main() {
  // Outputs a crashed bench left: removed before the first timing (see runAttempt).
  rmSync(join(BENCH, 'out'), { recursive: true, force: true });
  const started = new Date();
  const host = machine();
  log(`machine: ${host.cpus} × ${host.cpuModel}, ${host.memGiB} GiB, node ${host.node}, load ${host.loadAverage.join(' ')}; measuring with ${host.timeTool}`);
  const results = [];
  const inputs = [];
  for (const name of shapeNames) {
    const shape = SHAPES[name];
    const meta = await ensureInput(name);
    inputs.push({ ...meta, file: relative(ROOT, meta.file) });
    const maxZoom = maxZoomFor(meta);
    const cases = shape.formats.map((formats) => prepareCase({ kind: 'ours', meta, maxZoom, formats }));
    if (shape.naive && !args['skip-naive']) cases.push(prepareCase({ kind: 'naive', meta, maxZoom }));
    if (shape.archive && !args['skip-archive']) {
      cases.push(prepareCase({ kind: 'archive', meta, maxZoom }));
      if (shape.naive && !args['skip-naive']) cases.push(prepareCase({ kind: 'naive-pbf', meta, maxZoom }));
    }
    if (shape.tippecanoe && args.tippecanoe) {
      const bin = resolve(args.tippecanoe);
      const version = spawnSync(bin, ['--version'], { encoding: 'utf8' }).stderr.trim().replace(/^tippecanoe /, '') || 'unknown';
      cases.push(prepareCase({ kind: 'tippecanoe', meta, maxZoom, tippecanoe: { bin, version, input: await tippecanoeInput(meta) } }));
    }
    // Repeats go round the cases (ours, naive, ours, ...), so a slow spell of a shared machine does not land on one case only.
    const repeat = Math.max(1, Number(shape.cells >= 1000000 ? args['repeat-large'] : args.repeat));
    for (let i = 0; i < repeat; i++) for (const c of cases) await runAttempt(c);
    results.push(...cases.map(summarize));
  }
  const loadEnd = loadavg().map((l) => round(l, 2));
  removeOutputs();
  const t = targets(results, inputs);
  const md = [
    `### Benchmark (${started.toISOString().slice(0, 16).replace('T', ' ')} UTC)`,
    '',
    `Machine: ${host.cpus} × ${host.cpuModel}, ${host.memGiB} GiB RAM, Node ${host.node}, ${host.platform}; load average `
      + `${host.loadAverage.join(' / ')} at the start, ${loadEnd.join(' / ')} at the end. Times, and the peak resident set of the `
      + `process (its worker threads included), from ${host.timeTool}; each figure the median of the runs, our build and the naive `
      + `script taking turns. Every cell has a nucleus point (two features per cell). Command: \`npm run bench${commandArgs()}\`.`,
    '',
    table(results, inputs),
    '',
    t.lines,
    '',
  ].join('\n');
  process.stdout.write('\n' + md);
  mkdirSync(BENCH, { recursive: true });
  writeFileSync(join(BENCH, `${args.out}.md`), md);
  writeFileSync(join(BENCH, `${args.out}.json`), JSON.stringify({ started: started.toISOString(), machine: host, loadEnd, inputs, results, targets: t.values }, null, 2) + '\n');
  log(`wrote ${relative(ROOT, join(BENCH, `${args.out}.md`))} and ${args.out}.json`);
  if (!args['no-readme']) writeReadme(md);
  // Our build failing is a failed benchmark; the naive script failing is a finding.
  return results.some((x) => OURS.has(x.kind) && !x.ok) ? 1 : 0;
}

main().then(
  (code) => { process.exitCode = code; },
  (err) => { log(`error: ${err.stack ?? err.message}`); process.exitCode = 2; },
);
