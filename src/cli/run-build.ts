// What the build-family commands share: progress on stderr, SIGINT/SIGTERM handling, what --force removed.
import type { Removal } from '../io/sink.js';
import type { LostCounts, ProgressEvent } from '../report/types.js';
import { InterruptedError } from '../report/errors.js';
import { lostFeatures, progressLine, removalLine } from '../report/format.js';
import type { Options } from '../options.js';
import type { CliIO } from './io.js';
import { createLogger, type Logger } from './log.js';

/** Progress in the form --progress asks for: a redrawn terminal line, JSON lines for engines, or nothing. */
export function progressReporter(options: Options, io: CliIO): { onProgress: (e: ProgressEvent) => void; end: () => void } {
  const mode = options.quiet ? 'none' : options.progress === 'auto' ? (io.stderr.isTTY ? 'tty' : 'none') : options.progress;
  let last = 0;
  let drawn = false;
  return {
    onProgress: (e) => {
      if (mode === 'none') return;
      const now = Date.now();
      // At most a few updates a second: redrawing costs more than it tells.
      if (e.phase !== 'done' && now - last < (mode === 'json' ? 1000 : 200)) return;
      last = now;
      if (mode === 'json') io.stderr.write(`${JSON.stringify({ event: 'progress', ...e })}\n`);
      else { io.stderr.write(`\r\x1b[K${progressLine(e)}`); drawn = true; }
    },
    end: () => {
      if (drawn) io.stderr.write('\n');
      drawn = false;
    },
  };
}

/** Why a build stopped early, when a signal stopped it. */
export interface SignalState { signal: AbortSignal; received: () => NodeJS.Signals | undefined; dispose: () => void }

/**
 * SIGINT and SIGTERM abort the build: the pool ends the tasks in flight at once (worker/pool.ts), so a long unit is
 * not waited for, and a unit it cut short has no marker, which --resume tiles again; a second signal exits at once,
 * before the build has said what it kept. Exit codes follow the shell: 130 for SIGINT, 143 for SIGTERM.
 */
export function handleSignals(log: Logger, then?: string): SignalState {
  const controller = new AbortController();
  let received: NodeJS.Signals | undefined;
  const on = (sig: NodeJS.Signals) => {
    if (received) process.exit(sig === 'SIGINT' ? 130 : 143);
    received = sig;
    // A build says what it kept once it has stopped: read before its plan was written, it keeps nothing.
    log.warn(`${sig}: stopping, the tasks in flight ended rather than waited for${then ? `; ${then}` : ` (a second ${sig} stops at once)`}`, { event: 'stopping-on-signal', signal: sig });
    controller.abort();
  };
  process.on('SIGINT', on);
  process.on('SIGTERM', on);
  return {
    signal: controller.signal,
    received: () => received,
    dispose: () => { process.off('SIGINT', on); process.off('SIGTERM', on); },
  };
}

export function signalExitCode(sig: NodeJS.Signals | undefined): number | undefined {
  return sig === 'SIGINT' ? 130 : sig === 'SIGTERM' ? 143 : undefined;
}

/**
 * Runs a step of a sharded build (plan, build-shard, finalize) under `handleSignals`: stopped by a signal, it ends
 * with the signal's exit code, the warning having said what is kept (`then`) and to run the step again.
 */
export async function interruptible(log: Logger, step: string, progress: { end(): void }, run: (signal: AbortSignal) => Promise<number>, then = `the work directory is kept: run ${step} again to go on`): Promise<number> {
  const signals = handleSignals(log, then);
  try {
    return await run(signals.signal);
  } catch (e) {
    progress.end();
    const code = signalExitCode(signals.received());
    if (e instanceof InterruptedError && code !== undefined) return code;
    throw e;
  } finally {
    signals.dispose();
  }
}

/** Says on stderr what --force removed of earlier builds in OUT (a notice: -q hides it). */
export function removalLogger(log: Logger, out: string): (r: Removal) => void {
  return (r) => {
    const line = removalLine(r, out);
    if (line) log.notice(line, { event: 'removed', ...r });
  };
}

/**
 * How many features the pyramid lost (`features-lost`), as no exit code tells it: what a build or a sharded build's
 * finalize still says under -q, which hides progress and the summary, and what a plan says, which has no summary, -q
 * or not. -q's logger hides warnings: this one does not.
 */
export function warnLost(features: LostCounts, io: CliIO, log: Logger): void {
  const lost = lostFeatures(features);
  if (lost) createLogger(io.stderr, log.format).warn(lost, { event: 'features-lost', features });
}
