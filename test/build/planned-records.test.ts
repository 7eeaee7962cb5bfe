// A plan's record file found cut short while a unit reads it (it passed the check at the step's start): the step
// ends as for records found short at its start, a WorkStateError naming the file (exit 4), not an internal error.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildShard, planShardedBuild } from '../../src/build/pipeline.js';
import type { PlanFile } from '../../src/build/state.js';
import { exitCodeFor } from '../../src/cli/exit.js';
import { fileSource } from '../../src/io/read.js';
import { WorkStateError } from '../../src/report/errors.js';
import { recordFileName } from '../../src/stages/partition.js';
import { longOutlineInput, tmpDir } from '../helpers/pyramid.js';

describe('a record cut short found while a unit reads it', () => {
  it('ends the shard with a WorkStateError naming the file and what to do (exit 4)', async () => {
    const dir = tmpDir('mudm-planned-records');
    const out = path.join(dir, 'out');
    // The records hold pointers to shared.bin, and records of their own.
    await planShardedBuild([{ source: fileSource(longOutlineInput(dir)) }], { imageSize: '2048,2048', unitSize: 256, workers: 1, out, shards: 2 });
    // A plan that kept no sizes (written before they were kept) lets a record cut short pass the step's check, as
    // one cut short after the check would: the unit reading it finds it.
    const planPath = path.join(out, '.mudm-work', 'plan.json');
    const plan = JSON.parse(fs.readFileSync(planPath, 'utf8')) as PlanFile;
    expect(Object.keys(plan.recordBytes ?? {}).length).toBeGreaterThan(1);
    delete plan.recordBytes;
    fs.writeFileSync(planPath, JSON.stringify(plan));
    // The cell of the small square, which the first unit (shard 0's) reads: its record and a pointer, five bytes short.
    expect(plan.units[0].sources).toContain('0/0/0/1/1');
    const file = path.join(out, '.mudm-work', 'level-0', recordFileName('0/0/0/1/1'));
    const bytes = fs.readFileSync(file);
    let last = 0;
    for (let at = 0; at < bytes.length; at += bytes.readUInt32LE(at)) last = at;
    fs.truncateSync(file, bytes.length - 5);
    const err = await buildShard({ out, workers: 1 }, 0).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(WorkStateError);
    expect(exitCodeFor(err)).toBe(4);
    expect((err as WorkStateError).message).toBe(`corrupt unit records in ${file}: ${bytes.length - 5 - last} bytes of a truncated record at the end: `
      + 'it was cut short or changed since plan wrote it; give the step the work directory whole, every record of level-0 as plan wrote it, or plan again with plan --force');
  });
});
