// The CLI as a child process under a time limit, with the peak resident memory of its whole process tree.
import fs from 'node:fs';
import { BIN } from '../e2e/helpers.js';
import { spawn, type ChildProcess } from 'node:child_process';

export interface Measured {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Sum over the process tree of each process's peak resident set (VmHWM): never below the tree's true peak. */
  peakBytes: number;
  seconds: number;
  /** The run passed its time limit and was killed. */
  timedOut: boolean;
}

const MIB = 1024 * 1024;
export const mib = (bytes: number): string => `${(bytes / MIB).toFixed(0)} MiB`;

/** `VmHWM` of a process in bytes, 0 once it is gone. */
function peakOf(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** The process and every descendant (children of every thread), read from /proc. */
function tree(pid: number, out: number[] = []): number[] {
  out.push(pid);
  let tasks: string[] = [];
  try { tasks = fs.readdirSync(`/proc/${pid}/task`); } catch { return out; }
  for (const t of tasks) {
    let children = '';
    try { children = fs.readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8'); } catch { continue; }
    for (const c of children.split(' ').filter(Boolean)) tree(Number(c), out);
  }
  return out;
}

/**
 * Runs the CLI with `args`, polling the tree's peak memory every 20 ms (VmHWM only grows, so a poll misses at most
 * what the last 20 ms added), and kills it after `limitMs`. `onStart` may act on the running child (send a signal).
 */
export function runMeasured(args: readonly string[], limitMs: number, onStart?: (child: ChildProcess) => void): Promise<Measured> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '', stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => { stdout += s; });
  child.stderr.setEncoding('utf8').on('data', (s: string) => { stderr += s; });
  const peaks = new Map<number, number>();
  const poll = () => {
    for (const pid of tree(child.pid as number)) peaks.set(pid, Math.max(peaks.get(pid) ?? 0, peakOf(pid)));
  };
  const timer = setInterval(poll, 20);
  let timedOut = false;
  const killer = setTimeout(() => { timedOut = true; child.kill('SIGKILL'); }, limitMs);
  onStart?.(child);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearInterval(timer);
      clearTimeout(killer);
      const peakBytes = [...peaks.values()].reduce((a, b) => a + b, 0);
      resolve({ code, signal, stdout, stderr, peakBytes, seconds: (performance.now() - t0) / 1000, timedOut });
    });
  });
}

/** What a failed expectation shows: how the run ended and what it printed. */
export function described(m: Measured): string {
  return `exit ${m.code} (signal ${m.signal}${m.timedOut ? ', killed at the time limit' : ''}) after ${m.seconds.toFixed(1)} s, peak ${mib(m.peakBytes)}\n${m.stderr.slice(0, 2000)}${m.stdout.slice(0, 1000)}`;
}
