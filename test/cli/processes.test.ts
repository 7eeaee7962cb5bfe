// Whether the process a work directory records still runs: this one does; one killed and not reaped (a zombie) does not.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { localProcesses } from '../../src/index.js';

describe.skipIf(!fs.existsSync('/proc/self/stat'))('localProcesses', () => {
  it('counts a running process as alive, and a zombie (ended, its pid held until reaped) as not', async () => {
    expect(localProcesses.alive(process.pid, localProcesses.start)).toBe(true);
    // The shell starts a child, then becomes `sleep`, which never reaps it: the child ends and stays a zombie. The child
    // ends only once the shell is `sleep`: a child that ended first was at times reaped by the shell before its exec.
    const child = 'p=$$; (while [ "$(cat /proc/$p/comm)" != sleep ]; do sleep 0.01; done) & echo $!; exec sleep 5';
    const parent = spawn('sh', ['-c', child], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      const pid = Number(await new Promise<string>((resolve) => parent.stdout.once('data', (d: Buffer) => resolve(d.toString()))));
      const fields = () => {
        const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
        return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      };
      for (let i = 0; i < 100 && fields()[0] !== 'Z'; i++) await new Promise((r) => setTimeout(r, 20));
      expect(fields()[0]).toBe('Z');
      expect(localProcesses.alive(pid, undefined)).toBe(false);
    } finally {
      parent.kill('SIGKILL');
    }
  });
});
