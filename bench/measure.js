// The bench's measuring of a child process (wall, user and system time, peak RSS, by GNU time or by polling /proc)
// and its count of what a run wrote (files and tiles of a directory, tiles of an archive).
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setInterval, clearInterval } from 'node:timers';

/** GNU time, when it is there and `poll` is not asked for; null: poll /proc instead. */
export function gnuTime(poll) {
  // BusyBox and BSD `time` lack -v/-o; only trust GNU time, else fall back to polling /proc.
  if (poll || !existsSync('/usr/bin/time')) return null;
  const r = spawnSync('/usr/bin/time', ['-v', 'true'], { encoding: 'utf8' });
  return r.status === 0 && /Maximum resident set size/.test(r.stderr) ? '/usr/bin/time' : null;
}
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
    // utime, stime, and those of waited-for children.
    return { hwm, user: (Number(f[11]) + Number(f[13])) / CLK_TCK, sys: (Number(f[12]) + Number(f[14])) / CLK_TCK };
  } catch {
    return null;
  }
}

function parseGnuTime(text) {
  const num = (re) => Number(re.exec(text)?.[1] ?? NaN);
  return {
    user: num(/User time \(seconds\): ([\d.]+)/),
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

/**
 * Runs one command; resolves with wall, user and system time, peak RSS and exit status, never rejects. The peak is
 * the process's own (its worker threads share it); neither our build nor the naive script starts another process.
 */
export function measure(label, command, commandArgs, logBase, { cwd, timeoutMs, time: GNU_TIME }) {
  mkdirSync(dirname(logBase), { recursive: true });
  const timeFile = `${logBase}.time`;
  const outFd = openSync(`${logBase}.out`, 'w');
  const errFd = openSync(`${logBase}.err`, 'w');
  const argv = GNU_TIME ? ['-v', '-o', timeFile, command, ...commandArgs] : commandArgs;
  const started = process.hrtime.bigint();
  return new Promise((done) => {
    // Own process group, so a timeout or Ctrl-C can end the command together with anything it started.
    const child = spawn(GNU_TIME ?? command, argv, { cwd, stdio: ['ignore', outFd, errFd], detached: true });
    running = child;
    let polled = { hwm: 0, user: 0, sys: 0 };
    const poll = GNU_TIME ? null : setInterval(() => {
      const p = readProc(child.pid);
      if (p) polled = { hwm: Math.max(polled.hwm, p.hwm), user: Math.max(polled.user, p.user), sys: Math.max(polled.sys, p.sys) };
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
      let { user, sys } = polled;
      let peak = polled.hwm;
      if (GNU_TIME && existsSync(timeFile)) ({ user, sys, peak } = parseGnuTime(readFileSync(timeFile, 'utf8')));
      const stderr = readFileSync(`${logBase}.err`, 'utf8');
      // GNU time reports a failed command through its own exit status; the child's exit is what matters.
      const exitCode = code ?? (signal ? 128 : 1);
      const ok = !spawnError && !timedOut && exitCode === 0;
      let error = null;
      if (spawnError) error = spawnError.message;
      else if (timedOut) error = `timed out after ${timeoutMs / 1000} s`;
      else if (!ok) error = `exit ${exitCode}${signal ? ` (${signal})` : ''}: ${lastLines(stderr, 4)}`;
      done({ label, ok, exitCode, error, wall, user, sys, peak, stderr });
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

/** Files and tiles written under `dir`, by name (no stat per file: 560,000 of them take minutes on a busy disk). */
export function scanOutput(dir) {
  const out = { files: 0, pbf: 0, json: 0 };
  const walk = (d) => {
    let entries;
    try { entries = readdirSync(d, { withFileTypes: true }); } catch { return; }
    for (const e of entries) {
      // The build's own record (.mudm-written) is not output.
      if (e.name.startsWith('.')) continue;
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) {
        out.files++;
        if (e.name.endsWith('.pbf')) out.pbf++;
        // Descriptor and run report sit at the root; every other .json is a tile (or the overview tile).
        else if (e.name.endsWith('.json') && d !== dir) out.json++;
      }
    }
  };
  walk(dir);
  return out;
}

/** Tiles an archive addresses, from its PMTiles header (another tiler's archive has no build report). */
export function headerTiles(file) {
  try {
    const head = readFileSync(file).subarray(0, 127);
    return head.toString('latin1', 0, 7) === 'PMTiles' ? Number(head.readBigUInt64LE(72)) : null;
  } catch {
    return null;
  }
}

/** PBF tiles in an archive, from its build report; null when the report cannot be read. */
export function archiveTiles(reportFile) {
  try {
    const report = JSON.parse(readFileSync(reportFile, 'utf8'));
    return Object.values(report.tiles.byZoom).reduce((n, z) => n + z.pbf.tiles, 0);
  } catch {
    return null;
  }
}
