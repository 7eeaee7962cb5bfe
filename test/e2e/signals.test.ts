// SIGINT and SIGTERM stop build and build-shard cleanly: exit 130/143, no descriptor, no temporary files, work dir kept;
// plan keeps nothing; a plan or build killed outright while reading is no obstacle to running it again; extract
// removes what it wrote.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SLOW_OPTS, expectOk, generateCells, listFiles, markerCount, removeTemps, runCli, startCli, tempDir, tmpLeftovers, waitFor, type RunResult } from './helpers.js';

let input = '';

beforeAll(() => {
  input = path.join(tempDir('signals-in'), 'cells.json');
  generateCells(input, 30_000);
});

afterAll(removeTemps);

/**
 * Starts the CLI, sends `signal` once `out` has a few unit markers (and `meanwhile` has run, given the pid), and
 * returns how it ended.
 */
async function interrupt(args: string[], out: string, signal: NodeJS.Signals, meanwhile?: (pid: number) => Promise<void>): Promise<RunResult> {
  const { child, done } = startCli(args);
  const started = await waitFor(() => markerCount(out) >= 2, 60_000);
  if (started && meanwhile) await meanwhile(child.pid as number);
  child.kill(signal);
  const r = await done;
  expect(started, 'no unit finished within 60 s').toBe(true);
  return r;
}

function expectCleanStop(out: string): void {
  expect(fs.existsSync(path.join(out, 'tileset.json')), 'no descriptor after an interruption').toBe(false);
  expect(tmpLeftovers(out), 'files left under a temporary name').toEqual([]);
  expect(fs.existsSync(path.join(out, '.mudm-work', 'plan.json')), 'the work directory is kept').toBe(true);
  expect(markerCount(out)).toBeGreaterThanOrEqual(2);
}

/** Every file under `dir` with a hash of its bytes, the work directory included (deep equality of Buffers is slow). */
function snapshot(dir: string): Map<string, string> {
  return new Map(listFiles(dir).map((f) => [f, createHash('sha256').update(fs.readFileSync(path.join(dir, f))).digest('hex')]));
}

/**
 * The steps of a sharded build run on a plain build's work directory: each refused (exit 2) with `why`, changing
 * nothing there (`running`: the build itself does, so only that no step recorded itself).
 */
async function expectStepsRefused(out: string, why: string, running = false): Promise<void> {
  const before = running ? undefined : snapshot(out);
  // One step while the build runs, which should not end first; all of them once it is interrupted.
  const steps = [[['build-shard', out, '--shard', '1'], 'build-shard: no shard 1 to tile'], [['build-shard', out, '--shard', '0'], 'build-shard: no shard 0 to tile'], [['finalize', out], 'finalize: nothing to finalize']] as const;
  for (const [step, nothing] of running ? steps.slice(0, 1) : steps) {
    const refused = await runCli(step);
    expect([refused.code, refused.stderr], step.join(' ')).toEqual([2, `error: ${nothing}: ${out} holds no plan for shards but the work directory of a plain build (${path.join(out, '.mudm-work')}, which build made, not plan), ${why}; to build it in shards instead, run mudm-tiles plan INPUT... -o ${out} --shards N --force, then build-shard and finalize\n`]);
  }
  // Nor do they record themselves there (owners/), which a build --force or --resume would have to step around.
  expect(fs.existsSync(path.join(out, '.mudm-work', 'owners')), 'a refused step recorded itself').toBe(false);
  if (before) expect(snapshot(out), 'files the refused steps changed').toEqual(before);
}

describe('build', () => {
  it.each([['SIGINT', 130], ['SIGTERM', 143]] as const)('%s: exit %i, no descriptor, no temporary files, the work directory kept for --resume (resume.test.ts resumes one)', async (signal, code) => {
    const out = path.join(tempDir('signal'), 'out');
    // While it runs, the steps of a sharded build are refused too, naming it.
    const running = (pid: number) => expectStepsRefused(out, `still running (pid ${pid}): wait for it to end, it writes the whole pyramid itself`, true);
    const r = await interrupt(['build', input, '-o', out, ...SLOW_OPTS], out, signal, running);
    expect(r.code, `exit code after ${signal} (signal ${r.signal}):\n${r.stderr}`).toBe(code);
    // What is kept is said once it has stopped (before its plan, nothing is): the warning does not promise it.
    expect(r.stderr).toContain(`warning: ${signal}: stopping, the tasks in flight ended rather than waited for (a second ${signal} stops at once)`);
    expect(r.stderr).toContain(`error: build interrupted by ${signal}: no descriptor written; run again with --resume to continue`);
    expectCleanStop(out);
    // finalize and build-shard are for plans: a usage error, as on a pyramid build finished, sending the user to
    // --resume (not to each other), the directory as it was, so that --resume continues it.
    await expectStepsRefused(out, `interrupted: mudm-tiles build INPUT... -o ${out} --resume continues it, with the inputs and options it was given`);
  });
});

describe('build-shard', () => {
  it('SIGTERM (a pod evicted): exit 143, no shard marker, and the retried shard completes', async () => {
    const out = path.join(tempDir('signal-shard'), 'out');
    expectOk(await runCli(['plan', input, '-o', out, '--shards', '1', '-q', ...SLOW_OPTS]), 'plan');
    const r = await interrupt(['build-shard', out, '--shard', '0', '--workers', '1'], out, 'SIGTERM');
    expect(r.code, `exit code after SIGTERM (signal ${r.signal}):\n${r.stderr}`).toBe(143);
    // A shard goes on by running it again, not by --resume.
    expect(r.stderr).toContain('warning: SIGTERM: stopping, the tasks in flight ended rather than waited for; the work directory is kept: run build-shard again to go on');
    expectCleanStop(out);
    expect(fs.existsSync(path.join(out, '.mudm-work', 'shards', '0.json')), 'an interrupted shard is not complete').toBe(false);
    const refused = await runCli(['finalize', out]);
    expect(refused.code, refused.stderr).toBe(4);

    expectOk(await runCli(['build-shard', out, '--shard', '0', '--workers', '1']), 'retried shard');
    expectOk(await runCli(['finalize', out, '-q']), 'finalize');
    expect(fs.existsSync(path.join(out, 'tileset.json'))).toBe(true);
  });
});

describe('extract', () => {
  let archives = '';
  beforeAll(async () => {
    archives = path.join(tempDir('signals-extract-in'), 'archives');
    expectOk(await runCli(['build', input, '-o', archives, '--archive', 'pmtiles', '-q']), 'archive build');
  }, 120_000);

  /** Tiles written under `out` so far (the zoom folders are made before any tile); 0 while --force removes folders under the walk. */
  const tilesIn = (out: string): number => {
    try {
      return listFiles(out).filter((f) => /^\d+\/.*\.(json|pbf)$/.test(f)).length;
    } catch {
      return 0;
    }
  };

  // Frozen (SIGSTOP) once a tile is there and no descriptor, the signal then reaches it before its end whatever the
  // machine's speed.
  it.each([['SIGINT', 130, false], ['SIGTERM', 143, true]] as const)('%s mid-copy: exit %i, what it wrote removed, no temporary file, the user\'s file kept (--force: %s)', async (signal, code, force) => {
    const out = path.join(tempDir('signals-extract'), 'out dir');
    const first = path.join(tempDir('signals-extract-first'), 'out');
    if (force) {
      expectOk(await runCli(['extract', archives, '-o', out, '-q']), 'first extract');
      fs.cpSync(out, first, { recursive: true });
      fs.writeFileSync(path.join(out, 'notes.txt'), 'mine');
    }
    const { child, done } = startCli(['extract', archives, '-o', out, ...(force ? ['--force'] : [])]);
    // With --force the earlier extract's descriptor goes first, its tiles after it, then the new tiles come.
    const copying = await waitFor(() => tilesIn(out) > 0 && !fs.existsSync(path.join(out, 'tileset.json')), 60_000, 1);
    child.kill('SIGSTOP');
    const whole = fs.existsSync(path.join(out, 'tileset.json'));
    child.kill(signal);
    child.kill('SIGCONT');
    const r = await done;
    expect([copying, whole], 'a tile written, and the extract not ended, when stopped').toEqual([true, false]);
    expect(r.code, `exit code after ${signal} (signal ${r.signal}):\n${r.stderr}`).toBe(code);
    // The earlier extract, which --force removed before writing, is gone too: said, with how many files it had.
    const earlier = force ? ` (--force had removed the earlier output's ${listFiles(first).filter((f) => !f.startsWith('.mudm-written/')).length} files)` : '';
    expect(r.stderr).toContain(`error: extract interrupted by ${signal}: what it wrote in ${out} is removed${earlier}; run it again`);
    expect(tmpLeftovers(out), 'files left under a temporary name').toEqual([]);
    if (force) expect(listFiles(out), 'only the user\'s file is left').toEqual(['notes.txt']);
    else expect(fs.existsSync(out), 'the folder extract made is gone').toBe(false);
  });
});

/**
 * Starts the CLI on a FIFO fed the first half of `input`, so that it is surely still reading when `signal` reaches it
 * (once its work directory is there); then closes the FIFO and returns how it ended.
 */
async function interruptReading(args: (fifo: string) => string[], out: string, signal: NodeJS.Signals, meanwhile?: (pid: number) => Promise<void>): Promise<RunResult> {
  const fifo = path.join(tempDir('signals-fifo'), 'cells.json');
  execFileSync('mkfifo', [fifo]);
  const { child, done } = startCli(args(fifo));
  const writer = fs.createWriteStream(fifo);
  // The reader is killed: the rest would go nowhere (EPIPE).
  writer.on('error', () => {});
  const text = fs.readFileSync(input);
  writer.write(text.subarray(0, text.length >> 1));
  const reading = await waitFor(() => fs.existsSync(path.join(out, '.mudm-work', 'owner.json')), 60_000);
  if (reading && meanwhile) await meanwhile(child.pid as number);
  child.kill(signal);
  const r = await done;
  writer.destroy();
  expect(reading, 'no work directory within 60 s').toBe(true);
  return r;
}

describe('killed while reading', () => {
  it('plan, SIGTERM: exit 143, says nothing is kept and keeps nothing; run again, it plans', async () => {
    const out = path.join(tempDir('signals-plan'), 'out');
    const r = await interruptReading((fifo) => ['plan', fifo, '-o', out, '--shards', '2', '--workers', '1'], out, 'SIGTERM');
    expect(r.code, r.stderr).toBe(143);
    expect(r.stderr).toContain('warning: SIGTERM: stopping, the tasks in flight ended rather than waited for; nothing is kept: run plan again');
    expect(fs.existsSync(out), 'nothing is left of the plan').toBe(false);
    expectOk(await runCli(['plan', input, '-o', out, '--shards', '2', '--workers', '1', '-q']), 'plan run again');
    expect(fs.existsSync(path.join(out, '.mudm-work', 'owner.json')), 'a plan leaves no owner record for the shards').toBe(false);
  });

  it.each([['plan', ['--shards', '2']], ['build', []]] as const)('%s, SIGKILL: run again as it was (no --force), it goes on from the start', async (command, extra) => {
    const out = path.join(tempDir(`signals-kill-${command}`), 'out');
    // Before its plan, a build's work directory is said to be a plain build's, as once it has one.
    const running = (pid: number) => (command === 'build' ? expectStepsRefused(out, `still running (pid ${pid}), reading its inputs: wait for it to end, it writes the whole pyramid itself`, true) : Promise.resolve());
    const r = await interruptReading((fifo) => [command, fifo, '-o', out, '--workers', '1', ...extra], out, 'SIGKILL', running);
    expect(r.signal).toBe('SIGKILL');
    expect(fs.existsSync(path.join(out, '.mudm-work', 'plan.json')), 'killed before its plan').toBe(false);
    if (command === 'build') {
      await expectStepsRefused(out, `stopped before it wrote its plan (killed while reading its inputs), so there is nothing to continue: mudm-tiles build INPUT... -o ${out} starts it again, replacing that state`);
    } else {
      const shard = await runCli(['build-shard', out, '--shard', '0']);
      expect([shard.code, shard.stderr]).toEqual([4, `error: build-shard: no shard 0 to tile: plan was stopped before it had written the plan in ${path.join(out, '.mudm-work')} (killed while reading its inputs), so there is nothing to tile: run mudm-tiles plan INPUT... -o ${out} --shards N again\n`]);
    }
    expectOk(await runCli([command, input, '-o', out, '--workers', '1', '-q', ...extra]), `${command} run again`);
  });
});

