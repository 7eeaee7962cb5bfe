// abortableSource: a read blocked forever ends at once on abort, and reading through it holds no chunk already read.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { abortableSource, type Source } from '../../src/io/source.js';
import { InterruptedError } from '../../src/report/errors.js';

const DIST_SOURCE = path.resolve(__dirname, '../../dist/io/source.js');

describe('abortableSource', () => {
  it('ends a read that never returns as soon as the signal aborts', async () => {
    let unblocked = false;
    const blocked: Source = {
      name: 'fifo',
      open: () => (async function* () { yield new Uint8Array([1]); await new Promise(() => {}); })(),
      unblock: () => { unblocked = true; },
    };
    const ctl = new AbortController();
    const seen: number[] = [];
    const reading = (async () => { for await (const c of abortableSource(blocked, ctl.signal).open()) seen.push(c.length); })();
    await new Promise((r) => setTimeout(r, 20));
    ctl.abort();
    await expect(reading).rejects.toThrow(InterruptedError);
    await expect(reading).rejects.toThrow('reading fifo interrupted');
    expect(seen).toEqual([1]);
    expect(unblocked).toBe(true);
  });

  it('keeps no chunk it has passed on: after 256 MiB read through it, only the last chunk is held', () => {
    // A child with --expose-gc: after a full collection only the buffers still referenced remain.
    const script = `
      import { abortableSource } from ${JSON.stringify(DIST_SOURCE)};
      const source = { name: 'big', open: () => (async function* () { for (let i = 0; i < 256; i++) yield new Uint8Array(1 << 20).fill(i); })() };
      let n = 0, arrayBuffers = 0;
      for await (const c of abortableSource(source, new AbortController().signal).open()) {
        n += c.length;
        // Measured while the read is still going: what the source holds then is what a long read accumulates.
        if (n === 256 * (1 << 20)) { globalThis.gc(); arrayBuffers = process.memoryUsage().arrayBuffers; }
      }
      process.stdout.write(JSON.stringify({ n, arrayBuffers }));`;
    const r = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { n: number; arrayBuffers: number };
    expect(out.n).toBe(256 * 2 ** 20);
    // Retaining the chunks (the bug this guards against) leaves all 256 MiB.
    expect(out.arrayBuffers).toBeLessThan(32 * 2 ** 20);
  });
});
