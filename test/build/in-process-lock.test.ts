// Two builds of one process through the library: the work directory of one that runs is not the other's to take.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildPyramid, DiskWorkDir, InterruptedError, localProcesses, memorySource, streamSource, WorkStateError } from '../../src/index.js';
import { readTree, tmpDir } from '../helpers/pyramid.js';
import { collection } from '../inspect/fixture.js';

const dir = tmpDir('mudm-in-process-lock');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('two builds in one process, with localProcesses', () => {
  it('refuses --force and --resume on the output of a build still running, then lets them go once it ends', async () => {
    const out = path.join(dir, 'out');
    const text = collection();
    // The first build reads a stream that holds back its end until let go: it is running all that time.
    let letGo: () => void = () => {};
    const gate = new Promise<void>((resolve) => { letGo = resolve; });
    async function* held(): AsyncGenerator<string> {
      yield text.slice(0, 10);
      await gate;
      yield text.slice(10);
    }
    const options = { out, maxZoom: 1, workers: 1 };
    const first = buildPyramid([{ source: streamSource('held.json', held()) }], options, { processes: localProcesses });
    const work = path.join(out, '.mudm-work');
    for (let i = 0; i < 200 && !fs.existsSync(path.join(work, 'owner.json')); i++) await new Promise((r) => setTimeout(r, 25));
    for (const flag of [{ force: true }, { resume: true }]) {
      const second = buildPyramid([{ source: memorySource('cells.json', text) }], { ...options, ...flag }, { processes: localProcesses });
      const err = await second.catch((e: unknown) => e);
      expect(err, JSON.stringify(flag)).toBeInstanceOf(WorkStateError);
      expect((err as Error).message).toContain(`${work} belongs to a build that is still running (pid ${process.pid})`);
    }
    letGo();
    const report = await first;
    expect(report.tiles.total).toBeGreaterThan(0);
    // Ended: a rebuild with --force is this process's to make.
    const again = await buildPyramid([{ source: memorySource('cells.json', text) }], { ...options, force: true }, { processes: localProcesses });
    expect(again.tiles.total).toBe(report.tiles.total);
    expect(localProcesses.running?.size).toBe(0);
  });

  it('lets one of two resumed builds at once take over an interrupted one, and the pyramid is whole', async () => {
    const out = path.join(dir, 'resumed'), clean = path.join(dir, 'clean');
    const text = collection();
    const options = { out, maxZoom: 2, workers: 1 };
    await buildPyramid([{ source: memorySource('cells.json', text) }], { ...options, out: clean });
    // Stopped as soon as its plan is written: a plan to continue.
    const stop = new AbortController();
    class Stopping extends DiskWorkDir {
      override writeJson(rel: string, value: unknown): void {
        super.writeJson(rel, value);
        if (rel === 'plan.json') stop.abort();
      }
    }
    const work = new Stopping(path.join(out, '.mudm-work'), localProcesses);
    await expect(buildPyramid([{ source: memorySource('cells.json', text) }], options, { processes: localProcesses, signal: stop.signal, work })).rejects.toThrow(InterruptedError);
    const resume = () => buildPyramid([{ source: memorySource('cells.json', text) }], { ...options, resume: true }, { processes: localProcesses });
    const results = await Promise.allSettled([resume(), resume()]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    const refused = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(refused.reason).toBeInstanceOf(WorkStateError);
    expect((refused.reason as Error).message).toContain(`belongs to a build that is still running (pid ${process.pid}): --resume does not stop it`);
    const files = (root: string) => readTree(root);
    const got = files(out), want = files(clean);
    for (const t of [got, want]) t.delete('build-report.json');
    expect([...got.keys()].sort()).toEqual([...want.keys()].sort());
    for (const [k, v] of want) expect(got.get(k)?.equals(v), k).toBe(true);
    expect(localProcesses.running?.size).toBe(0);
  });
});
