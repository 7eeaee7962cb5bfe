// The probe of this machine's processes (pid, start, whether one runs) that the CLI gives builds; library callers may too.
import fs from 'node:fs';
import type { ProcessProbe } from '../io/workdir.js';

/**
 * When process `pid` started (the boot's id and its start time in clock ticks: field 22 of /proc/PID/stat, counted
 * after the command name, which may hold spaces), and whether it has ended (state Z or X: a zombie, killed and not yet
 * reaped by its parent); undefined where /proc does not say (not Linux, or no such process).
 */
function procStat(pid: number): { start: string; ended: boolean } | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const boot = fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { start: `${boot}:${fields[19]}`, ended: fields[0] === 'Z' || fields[0] === 'X' };
  } catch {
    return undefined;
  }
}

/**
 * This process, and whether process `pid` runs: the same start when both are known (a reused pid is another
 * process), and not ended (a zombie holds its pid until reaped, but works no more); else signal 0 (asks without
 * sending; EPERM: running, another user's).
 */
export const localProcesses: ProcessProbe = {
  pid: process.pid,
  start: procStat(process.pid)?.start,
  running: new Set(),
  alive(pid, start) {
    const stat = procStat(pid);
    if (stat?.ended) return false;
    const now = stat?.start;
    if (start !== undefined && now !== undefined) return now === start;
    try {
      process.kill(pid, 0);
      return true;
    } catch (err) {
      return (err as { code?: string }).code === 'EPERM';
    }
  },
};
