// Shared by the pipeline tests: running the built CLI as a process, temp dirs, and byte-for-byte pyramid comparison.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { OPTIONS, flagName, type Command, type OptionName, type OptionSpec } from '../../src/options.js';
import { COMMANDS } from '../../src/cli/commands/index.js';
import { UnitLog } from '../../src/build/unit-log.js';
import { DiskWorkDir } from '../../src/io/workdir.js';
import { makeTemp, removeMadeTemps } from '../helpers/temps.js';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const BIN = path.join(ROOT, 'bin', 'mudm-tiles.js');
export const SAMPLE = path.join(ROOT, 'sample-data', 'slide');
/**
 * The sample slide (a 2048 px world) is one unit at the default unit size; 512 px units give 12 level-0 units, so 3 shards get work and the
 * upper level reads markers from every shard.
 */
export const SHARDED_OPTS = ['--unit-size', '512'];

export interface RunResult { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }

export interface RunOptions { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }

/** The CLI as a child process, collecting its output; `done` settles when it exits. */
export function startCli(args: readonly string[], opts: RunOptions = {}): { child: ChildProcess; done: Promise<RunResult> } {
  return startProcess(process.execPath, [BIN, ...args], opts);
}

export function runCli(args: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
  return startCli(args, opts).done;
}

export function startProcess(file: string, args: readonly string[], opts: RunOptions = {}): { child: ChildProcess; done: Promise<RunResult> } {
  const child = spawn(file, args, { cwd: opts.cwd ?? ROOT, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (s: string) => { stdout += s; });
  child.stderr?.setEncoding('utf8').on('data', (s: string) => { stderr += s; });
  const done = new Promise<RunResult>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${path.basename(file)} ${args.join(' ')}: no exit after ${opts.timeoutMs ?? 90_000} ms\n${stderr}`));
    }, opts.timeoutMs ?? 90_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
  return { child, done };
}

export function runProcess(file: string, args: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
  return startProcess(file, args, opts).done;
}

/** Asserts exit 0, showing the CLI's stderr when it is not. */
export function expectOk(r: RunResult, what: string): void {
  expect(r.code, `${what} failed (code ${r.code}, signal ${r.signal}):\n${r.stderr}${r.stdout}`).toBe(0);
}

/** A fresh directory under the system temp dir, removed after the test file (or earlier by `removeTemps`). */
export function tempDir(prefix: string): string {
  return makeTemp(`mudm-${prefix}`);
}

export const removeTemps = removeMadeTemps;

/** A directory holding a `mudm-tiles` command that runs this checkout's CLI: what "the package's bin on PATH" means. */
export function cliBinDir(): string {
  const dir = tempDir('bin');
  const file = path.join(dir, 'mudm-tiles');
  fs.writeFileSync(file, `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} "$@"\n`);
  fs.chmodSync(file, 0o755);
  return dir;
}

/**
 * Puts a stand-in `sbatch` in `bin`: it runs each job at once (array tasks one after the other, with
 * SLURM_ARRAY_TASK_ID), fails as the job fails, prints a job id, and appends its arguments to `log`, one line a job.
 */
export function fakeSbatch(bin: string, log: string): void {
  fs.writeFileSync(path.join(bin, 'sbatch'), [
    '#!/usr/bin/env bash',
    'set -euo pipefail',
    'wrap=""; array=""',
    'for a in "$@"; do case $a in --wrap=*) wrap=${a#--wrap=} ;; --array=*) array=${a#--array=} ;; esac; done',
    `echo "$*" >> ${JSON.stringify(log)}`,
    'if [ -n "$array" ]; then',
    '  for ((i = ${array%-*}; i <= ${array#*-}; i++)); do SLURM_ARRAY_TASK_ID=$i sh -c "$wrap" >&2; done',
    'else sh -c "$wrap" >&2; fi',
    'echo $RANDOM',
  ].join('\n'));
  fs.chmodSync(path.join(bin, 'sbatch'), 0o755);
}

/** Every file under `dir` (hidden ones too), relative, sorted. */
export function listFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string): void => {
    for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(r);
      else out.push(r);
    }
  };
  walk('');
  return out.sort();
}

/** Removes `timings`, `run` (how the run went) and the given dotted paths (e.g. `units.resumed`) from a parsed build report. */
function reportWithout(text: string, drop: readonly string[]): unknown {
  const report = JSON.parse(text) as Record<string, unknown>;
  for (const p of ['timings', 'run', ...drop]) {
    const parts = p.split('.');
    let at: Record<string, unknown> | undefined = report;
    for (const k of parts.slice(0, -1)) at = at?.[k] as Record<string, unknown> | undefined;
    if (at) delete at[parts[parts.length - 1]];
  }
  return report;
}

/**
 * The same files with the same bytes; build-report.json is compared without its timings (and `dropFromReport`,
 * fields that describe the run rather than the pyramid, e.g. how many units a resumed run skipped).
 */
export function expectSamePyramid(actual: string, expected: string, dropFromReport: readonly string[] = [], visibleOnly = false): void {
  // visibleOnly: leaves out what lies under a dot folder (work state, the record of what was written).
  const visible = (files: string[]) => (visibleOnly ? files.filter((f) => !f.split('/').some((part) => part.startsWith('.'))) : files);
  const a = visible(listFiles(actual));
  const e = visible(listFiles(expected));
  expect(a, `files of ${actual} vs ${expected}`).toEqual(e);
  const differing = e.filter((f) => f !== 'build-report.json' && !fs.readFileSync(path.join(actual, f)).equals(fs.readFileSync(path.join(expected, f))));
  expect(differing, 'files whose bytes differ').toEqual([]);
  if (e.includes('build-report.json')) {
    const ra = reportWithout(fs.readFileSync(path.join(actual, 'build-report.json'), 'utf8'), dropFromReport);
    const re = reportWithout(fs.readFileSync(path.join(expected, 'build-report.json'), 'utf8'), dropFromReport);
    expect(ra, 'build-report.json without timings').toEqual(re);
  }
}

/** The sample built on one machine with SHARDED_OPTS: the pyramid every sharded run must equal. Returns its path. */
export async function buildLocalReference(): Promise<string> {
  const out = path.join(tempDir('local'), 'out');
  expectOk(await runCli(['build', SAMPLE, '-o', out, '-q', ...SHARDED_OPTS]), 'local build');
  return out;
}

/** Polls until `cond` holds; false on timeout. */
export async function waitFor(cond: () => boolean, timeoutMs: number, everyMs = 20): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return cond();
}

/** Number of unit markers of `level` in OUT's work directory. */
export function markerCount(out: string, level = 0, work = path.join(out, '.mudm-work')): number {
  return new UnitLog(new DiskWorkDir(work)).count(level);
}

/** Writes `cells` synthetic cells (and their nuclei) with bench/generate.js, deterministic for a seed. */
export function generateCells(file: string, cells: number): void {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'bench', 'generate.js'), '--cells', String(cells), '--quiet', '-o', file], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`bench/generate.js failed: ${r.stderr}`);
}

/**
 * Options of a build big enough to interrupt: ~30k cells in 256 px units are ~100 level-0 units, several seconds
 * of tiling with one worker, so a signal lands in the middle.
 */
export const SLOW_OPTS = ['--workers', '1', '--unit-size', '256'];

/** Files left under a temporary name (`*.tmp-*`) anywhere below `dir`. */
export function tmpLeftovers(dir: string): string[] {
  return fs.existsSync(dir) ? listFiles(dir).filter((f) => /\.tmp-/.test(path.basename(f))) : [];
}

// ---- what the CLI accepts ------------------------------------------------------------------------------------

const SPECS = OPTIONS as Record<OptionName, OptionSpec>;

export const COMMAND_NAMES: readonly string[] = COMMANDS.map((c) => c.name);

/** The option a flag names (`--max-zoom`, `--max-zoom=3`, `-o`), whatever command it belongs to. */
export function optionOfFlag(token: string): OptionName | undefined {
  const flag = token.startsWith('--') ? token.slice(2).split('=')[0] : undefined;
  return (Object.keys(SPECS) as OptionName[]).find((name) =>
    flag !== undefined ? flagName(name) === flag || (SPECS[name].type === 'boolean' && `no-${flagName(name)}` === flag) : `-${SPECS[name].short}` === token,
  );
}

/**
 * Problems of one invocation `mudm-tiles COMMAND ARGS...`: an unknown command, an unknown option, an option the
 * command does not take, an option that needs a value without one. `where` prefixes the messages.
 */
export function invocationProblems(where: string, command: string, args: readonly string[]): string[] {
  if (!COMMAND_NAMES.includes(command)) return [`${where}: unknown command '${command}'`];
  const problems: string[] = [];
  for (let k = 0; k < args.length; k++) {
    const token = args[k];
    if (token === '--') break;
    if (!token.startsWith('-') || token === '-') continue;
    const name = optionOfFlag(token);
    if (name === undefined) {
      problems.push(`${where}: ${command}: unknown option ${token}`);
      continue;
    }
    const spec = SPECS[name];
    if (!spec.commands.includes(command as Command)) problems.push(`${where}: ${command} does not take ${token} (it is for ${spec.commands.join(', ')})`);
    if (spec.type !== 'boolean' && !token.includes('=')) {
      const value = args[k + 1];
      if (value === undefined || (value.startsWith('-') && !/^-\d/.test(value))) problems.push(`${where}: ${token} needs a value`);
      k++;
    }
  }
  return problems;
}

/** A value of the right type for an option, to feed the CLI's own parser where a template holds a placeholder. */
export function sampleValue(name: OptionName): string {
  const spec = SPECS[name];
  if (spec.choices) return spec.choices[0];
  if (spec.type === 'integer') return '1';
  if (spec.type === 'bytes') return '1M';
  return 'x';
}

/**
 * Starts the CLI with `args`, SIGKILLs it once `started()` holds (within 60 s), and checks that the kill, not the
 * end of the build, stopped it: the first half of every kill-and-resume test.
 */
export async function killWhen(args: readonly string[], started: () => boolean): Promise<void> {
  const { child, done } = startCli(args);
  const ready = await waitFor(started, 60_000);
  child.kill('SIGKILL');
  const killed = await done;
  expect(ready, 'no unit finished within 60 s').toBe(true);
  expect(killed.signal, `the build ended before the kill (code ${killed.code}); the input is too small to interrupt`).toBe('SIGKILL');
}
