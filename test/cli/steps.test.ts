// plan, build-shard and finalize in process (main with in-memory io): the options each step takes, and its refusals.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { memoryIO } from '../../src/cli/io.js';
import { longOutlineInput, readTree, tmpDir } from '../helpers/pyramid.js';

const CELLS = 'sample-data/slide/cells.json';
const PLAN = ['--shards', '2', '--unit-size', '512', '--max-zoom', '3', '--workers', '1'];

async function step(args: string[], env: Record<string, string> = {}): Promise<{ code: number; err: string }> {
  const io = memoryIO({ env });
  const code = await main(args, io);
  return { code, err: io.err() };
}

/** What a pyramid holds, path → hash, but the report (its timings differ): deep equality of Buffers is slow. */
function contents(dir: string): Map<string, string> {
  const out = new Map([...readTree(dir)].map(([p, b]) => [p, createHash('sha256').update(b).digest('hex')] as const));
  out.delete('build-report.json');
  return out;
}

let shardsDone = '';

/** A planned OUT whose two shards are done, what finalize is given: a copy of one made once (its paths are relative). */
function sharded(): string {
  const out = path.join(tmpDir('mudm-steps'), 'out');
  fs.cpSync(shardsDone, out, { recursive: true });
  return out;
}

let reference: Map<string, string>;

beforeAll(async () => {
  shardsDone = path.join(tmpDir('mudm-steps'), 'out');
  for (const args of [['plan', CELLS, '-o', shardsDone, ...PLAN], ['build-shard', shardsDone, '--shard', '0', '--workers', '1'], ['build-shard', shardsDone, '--shard', '1', '--workers', '1']]) {
    const r = await step([...args, '-q']);
    expect(r.code, r.err).toBe(0);
  }
  const out = sharded();
  expect((await step(['finalize', out, '-q', '--workers', '1'])).code).toBe(0);
  reference = contents(out);
});

describe('finalize', () => {
  it('takes --memory-budget, which bounds the records of its coarse zooms (1 byte: every one spills), and writes the same tiles', async () => {
    const out = sharded();
    const r = await step(['finalize', out, '--memory-budget', '1', '-q', '--workers', '1']);
    expect(r.code, r.err).toBe(0);
    expect(contents(out)).toEqual(reference);
    expect(fs.existsSync(path.join(out, '.mudm-work'))).toBe(false);
  });

  it('takes --progress json, for engines that collect it as build-shard\'s: JSON lines on stderr, to the one of phase done', async () => {
    const out = sharded();
    const r = await step(['finalize', out, '--progress', 'json', '--log', 'json', '--workers', '1']);
    expect(r.code, r.err).toBe(0);
    const lines = r.err.trim().split('\n').map((l) => JSON.parse(l) as { event?: string; phase?: string });
    expect(lines.filter((l) => l.event === 'progress').at(-1)).toMatchObject({ event: 'progress', phase: 'done' });
  });
});

describe('build-shard', () => {
  it('an index past the plan\'s shards says where it came from, how many the plan has, and (from the engine) what to match (exit 2)', async () => {
    const out = path.join(tmpDir('mudm-steps'), 'out');
    expect((await step(['plan', CELLS, '-o', out, ...PLAN, '-q'])).code).toBe(0);
    const work = path.join(out, '.mudm-work');
    const given = await step(['build-shard', out, '--shard', '2']);
    expect([given.code, given.err.split('\n')[0]]).toEqual([2, `error: --shard must be 0..1, found 2: the plan in ${work} has 2 shard(s)`]);
    // An Indexed Job of more completions than plan --shards: the index is no --shard the user gave.
    const job = await step(['build-shard', out], { JOB_COMPLETION_INDEX: '3' });
    expect([job.code, job.err.split('\n')[0]]).toEqual([2, `error: JOB_COMPLETION_INDEX must be 0..1, found 3: the plan in ${work} has 2 shard(s); JOB_COMPLETION_INDEX is set by the engine: run as many tasks as plan --shards made (2), or plan again with --shards as many as the tasks`]);
    expect(fs.readdirSync(out)).toEqual(['.mudm-work']);
  });
});

describe('build-shard and finalize of an output that is not there', () => {
  it('name it as missing, not a work directory inside it (exit 4, as for a plan missing), and make nothing', async () => {
    const dir = tmpDir('mudm-steps');
    const out = path.join(dir, 'nonexist');
    for (const args of [['build-shard', out, '--shard', '0'], ['finalize', out]]) {
      const r = await step(args);
      expect([r.code, r.err]).toEqual([4, `error: ${out} does not exist, so there is no plan to go on with: check the path, or run mudm-tiles plan INPUT... -o ${out} first\n`]);
    }
    // One archive: its work directory lies beside it, in a folder not there either.
    const archive = path.join(dir, 'nodir', 'slide.pmtiles');
    const r = await step(['build-shard', archive, '--shard', '0']);
    expect([r.code, r.err]).toEqual([4, `error: ${path.dirname(archive)} does not exist, so there is no plan to go on with: check the path, or run mudm-tiles plan INPUT... -o ${archive} first\n`]);
    expect(fs.readdirSync(dir)).toEqual([]);
  });
});

describe('build-shard and finalize of a pyramid that build wrote whole', () => {
  it('say there is no plan for shards there, what is, and what to run (exit 2, as other usage errors of theirs), touching nothing', async () => {
    const dir = tmpDir('mudm-steps');
    const out = path.join(dir, 'whole');
    expect((await step(['build', CELLS, '-o', out, '--max-zoom', '2', '--workers', '1', '-q'])).code).toBe(0);
    const before = contents(out);
    const report = fs.readFileSync(path.join(out, 'build-report.json'), 'utf8');
    const found = (left: string) => `${out} holds a complete pyramid and no plan for shards (no work directory ${path.join(out, '.mudm-work')}, and its build-report.json names no shards, run.shards): either build wrote it whole, or the finalize of an earlier mudm-tiles, which did not record shards, finished it; this cannot tell which, and either way the pyramid is complete as it is, with nothing left to ${left}; to build it in shards anew, run mudm-tiles plan INPUT... -o ${out} --shards N --force, then build-shard and finalize`;
    const shard = await step(['build-shard', out, '--shard', '0']);
    expect([shard.code, shard.err]).toEqual([2, `error: build-shard: no shard 0 to tile: ${found('tile')}\n`]);
    const fin = await step(['finalize', out]);
    expect([fin.code, fin.err]).toEqual([2, `error: finalize: nothing to finalize: ${found('finalize')}\n`]);
    expect(contents(out)).toEqual(before);
    expect(fs.readFileSync(path.join(out, 'build-report.json'), 'utf8')).toBe(report);
    // A sharded build's report names its shards: a step retried once it is finalized has nothing to do, and says so.
    const planned = sharded();
    expect((await step(['finalize', planned, '-q', '--workers', '1'])).code).toBe(0);
    expect(JSON.parse(fs.readFileSync(path.join(planned, 'build-report.json'), 'utf8'))).toMatchObject({ run: { shards: 2 } });
    const again = await step(['build-shard', planned, '--shard', '1']);
    expect([again.code, again.err]).toEqual([0, `warning: ${planned} is finalized already (a complete output, its work directory gone): nothing for shard 1 to do [finalized-already]\n`]);
  });
});

describe('build-shard and finalize of a work directory whose command stopped before its plan (killed while reading)', () => {
  /** OUT holding only the work directory such a command leaves: its owner record (of a process that ended), and the mark of a --force run. */
  function leftBy(owner: Record<string, unknown>, force = false): { out: string; work: string } {
    const out = path.join(tmpDir('mudm-steps'), 'out');
    const work = path.join(out, '.mudm-work');
    fs.mkdirSync(work, { recursive: true });
    fs.writeFileSync(path.join(work, 'owner.json'), JSON.stringify({ pid: 2 ** 22 + 7, host: os.hostname(), start: 'gone', run: 'abcd1234', ...owner }));
    if (force) fs.writeFileSync(path.join(work, 'removing.json'), JSON.stringify({ by: 'force', ...owner }));
    return { out, work };
  }

  /** Runs build-shard and finalize there: each refused with `code` and `why` after what it has nothing of, nothing touched. */
  async function expectRefused(out: string, code: number, why: string): Promise<void> {
    const before = contents(out);
    for (const [args, nothing] of [[['build-shard', out, '--shard', '0'], 'build-shard: no shard 0 to tile'], [['finalize', out], 'finalize: nothing to finalize']] as const) {
      const r = await step([...args]);
      expect([r.code, r.err], args[0]).toEqual([code, `error: ${nothing}${why}\n`]);
    }
    expect(contents(out)).toEqual(before);
    expect(fs.existsSync(path.join(out, '.mudm-work', 'owners')), 'a refused step recorded itself').toBe(false);
  }

  it('a plain build\'s: exit 2 as once it has its plan, saying whose it is and that build starts it again (with --force, as it was run)', async () => {
    const plain = leftBy({ command: 'build' });
    const head = (out: string, work: string) => `: ${out} holds no plan for shards but the work directory of a plain build (${work}, which build made, not plan), stopped before it wrote its plan (killed while reading its inputs), so there is nothing to continue: `;
    const tail = (out: string) => `; to build it in shards instead, run mudm-tiles plan INPUT... -o ${out} --shards N --force, then build-shard and finalize`;
    await expectRefused(plain.out, 2, `${head(plain.out, plain.work)}mudm-tiles build INPUT... -o ${plain.out} starts it again, replacing that state${tail(plain.out)}`);
    const forced = leftBy({ command: 'build' }, true);
    await expectRefused(forced.out, 2, `${head(forced.out, forced.work)}mudm-tiles build INPUT... -o ${forced.out} --force starts it again, replacing that state${tail(forced.out)}`);
    // As the message says: the build run again replaces that state, without --force.
    expect((await step(['build', CELLS, '-o', plain.out, '--max-zoom', '1', '--workers', '1', '-q'])).code).toBe(0);
  });

  it('a plan\'s: exit 4, run plan again (with --force, as it was run)', async () => {
    const { out, work } = leftBy({ command: 'plan' }, true);
    await expectRefused(out, 4, `: plan --force was stopped before it had written the plan in ${work} (killed while reading its inputs), so there is nothing to tile: run mudm-tiles plan INPUT... -o ${out} --shards N --force again`);
  });

  it('one whose record does not say (an earlier version\'s): exit 4, both said', async () => {
    const { out, work } = leftBy({});
    await expectRefused(out, 4, `: ${work} holds no plan: a build or a plan (its record, of an earlier mudm-tiles, does not say which) stopped there before it wrote one (killed while reading its inputs), so there is nothing to continue either way: `
      + `run it again, mudm-tiles plan INPUT... -o ${out} --shards N for shards, or mudm-tiles build INPUT... -o ${out} for a plain build`);
  });
});

describe('plan', () => {
  it('refuses --tmp-dir, which it would pass over (its records go to OUT/.mudm-work for the shards), from the CLI and a library caller alike', async () => {
    const dir = tmpDir('mudm-steps');
    const r = await step(['plan', CELLS, '-o', path.join(dir, 'out'), ...PLAN, '--tmp-dir', path.join(dir, 'scratch')]);
    expect([r.code, r.err.split('\n')[0]]).toEqual([2, 'error: option --tmp-dir does not apply to plan (it is for build)']);
    const { planShardedBuild } = await import('../../src/build/pipeline.js');
    await expect(planShardedBuild([], { out: path.join(dir, 'lib'), tmpDir: path.join(dir, 'scratch') })).rejects.toThrow(`--tmp-dir ${path.join(dir, 'scratch')} does not apply to plan: it keeps every record in the work directory, where the shards read them`);
    expect(fs.readdirSync(dir)).toEqual([]);
  });
});

describe('finalize of a work directory without its records', () => {
  it('refuses (exit 4) before writing anything when the plan\'s level-0 records are gone, as a merge of the shards\' outputs may leave them out', async () => {
    const out = sharded();
    fs.rmSync(path.join(out, '.mudm-work', 'level-0'), { recursive: true });
    const r = await step(['finalize', out, '--workers', '1']);
    expect([r.code, r.err]).toEqual([4, `error: finalize: ${path.join(out, '.mudm-work')} lacks the plan's records (level-0), which finalize reads to tile a zoom anew where the shards' tiles pass the tile budget: give it the work directory whole, the records with the shards' markers\n`]);
    expect(fs.existsSync(path.join(out, 'tileset.json'))).toBe(false);
    expect(fs.existsSync(path.join(out, '.mudm-work', 'plan.json'))).toBe(true);
  });
});

describe('a step whose plan lost some of its records', () => {
  it('finalize refuses (exit 4) before writing anything, naming the record, whether or not a zoom is tiled anew', async () => {
    const out = sharded();
    const lost = path.join(out, '.mudm-work', 'level-0', '0_0_0_1_1.rec');
    fs.rmSync(lost);
    const r = await step(['finalize', out, '--workers', '1']);
    expect([r.code, r.err]).toEqual([4, `error: finalize: 1 of the plan's records is missing (${lost}), which finalize reads to tile a zoom anew where the shards' tiles pass the tile budget: give it the work directory whole, every record of level-0 as plan wrote it, or plan again with plan --force\n`]);
    expect(fs.existsSync(path.join(out, 'tileset.json'))).toBe(false);
    expect(fs.existsSync(path.join(out, '.mudm-work', 'plan.json'))).toBe(true);
  });

  it('build-shard refuses (exit 4) a shard whose units read a record that is gone; the other shard goes on', async () => {
    const out = path.join(tmpDir('mudm-steps'), 'out');
    expect((await step(['plan', CELLS, '-o', out, ...PLAN, '-q'])).code).toBe(0);
    const records = path.join(out, '.mudm-work', 'level-0');
    // Unit 4 of the sorted 12, so shard 0's.
    fs.rmSync(path.join(records, '0_0_0_1_1.rec'));
    const r = await step(['build-shard', out, '--shard', '0', '--workers', '1']);
    expect([r.code, r.err]).toEqual([4, `error: build-shard: 1 of the plan's records is missing (${path.join(records, '0_0_0_1_1.rec')}), which its units read: give it the work directory whole, every record of level-0 as plan wrote it, or plan again with plan --force\n`]);
    expect(fs.readdirSync(out)).toEqual(['.mudm-work']);
    expect((await step(['build-shard', out, '--shard', '1', '--workers', '1', '-q'])).code).toBe(0);
  });
});

/** Cuts `bytes` off the end of `file`; returns its size before. */
function cutShort(file: string, bytes: number): number {
  const size = fs.statSync(file).size;
  fs.truncateSync(file, size - bytes);
  return size;
}

/** What a step says of record files not of the size plan wrote (`files`: path, size now, size written). */
function resizedMessage(command: string, files: [string, number, number][], more = false): string {
  const why = command === 'finalize' ? "which finalize reads to tile a zoom anew where the shards' tiles pass the tile budget" : 'which its units read';
  const named = files.map(([f, now, wrote]) => `${f}: ${now} bytes, plan wrote ${wrote}`).join('; ') + (more ? '; …' : '');
  const count = more ? files.length + 1 : files.length;
  return `error: ${command}: ${count} of the plan's records ${count === 1 ? 'is not of the size' : 'are not of the sizes'} plan wrote (${named}), ${why}: `
    + "cut short or changed on the way (a copy that stopped early, an upload that lost its tail); give it the work directory whole, every record of level-0 as plan wrote it, or plan again with plan --force\n";
}

describe('a step whose plan\'s records were cut short on the way', () => {
  it('build-shard refuses (exit 4) a record a few bytes short before it writes anything, naming it with both sizes', async () => {
    const out = path.join(tmpDir('mudm-steps'), 'out');
    expect((await step(['plan', CELLS, '-o', out, ...PLAN, '-q'])).code).toBe(0);
    const cut = path.join(out, '.mudm-work', 'level-0', '0_0_0_1_1.rec');
    const size = cutShort(cut, 5);
    const r = await step(['build-shard', out, '--shard', '0', '--workers', '1']);
    expect([r.code, r.err]).toEqual([4, resizedMessage('build-shard', [[cut, size - 5, size]])]);
    expect(fs.readdirSync(out)).toEqual(['.mudm-work']);
  });

  it('finalize refuses (exit 4) records cut short before it writes anything, naming three of them', async () => {
    const out = sharded();
    const records = path.join(out, '.mudm-work', 'level-0');
    // The first four units' records, in the order of the units: the first three are named.
    const cut = ['0_0_0_0_0', '0_0_0_0_1', '0_0_0_0_2', '0_0_0_1_0'].map((n) => path.join(records, `${n}.rec`));
    const sizes = cut.map((f) => cutShort(f, 3));
    const r = await step(['finalize', out, '--workers', '1']);
    expect([r.code, r.err]).toEqual([4, resizedMessage('finalize', cut.slice(0, 3).map((f, i) => [f, sizes[i] - 3, sizes[i]]), true)]);
    expect(fs.existsSync(path.join(out, 'tileset.json'))).toBe(false);
    expect(fs.existsSync(path.join(out, '.mudm-work', 'plan.json'))).toBe(true);
  });

  it('shared.bin cut short (a long outline\'s record, shared by many cells) is refused by build-shard and by finalize (exit 4); whole again, the build goes on', async () => {
    const dir = tmpDir('mudm-steps');
    const out = path.join(dir, 'out');
    expect((await step(['plan', longOutlineInput(dir), '-o', out, ...PLAN, '-q'])).code).toBe(0);
    const shared = path.join(out, '.mudm-work', 'level-0', 'shared.bin');
    const whole = fs.readFileSync(shared);
    cutShort(shared, 8);
    const r = await step(['build-shard', out, '--shard', '0', '--workers', '1']);
    expect([r.code, r.err]).toEqual([4, resizedMessage('build-shard', [[shared, whole.length - 8, whole.length]])]);
    expect(fs.readdirSync(out)).toEqual(['.mudm-work']);
    fs.writeFileSync(shared, whole);
    for (const shard of ['0', '1']) expect((await step(['build-shard', out, '--shard', shard, '--workers', '1', '-q'])).code).toBe(0);
    cutShort(shared, 8);
    const f = await step(['finalize', out, '--workers', '1']);
    expect([f.code, f.err]).toEqual([4, resizedMessage('finalize', [[shared, whole.length - 8, whole.length]])]);
    expect(fs.existsSync(path.join(out, 'tileset.json'))).toBe(false);
    fs.writeFileSync(shared, whole);
    expect((await step(['finalize', out, '--workers', '1', '-q'])).code).toBe(0);
    expect(fs.existsSync(path.join(out, 'tileset.json'))).toBe(true);
  });
});

describe('a finalize killed while it removed its work directory', () => {
  it('leaves it aside; finalize or build-shard run again remove it, and no folder of other files named alike', async () => {
    const out = sharded();
    expect((await step(['finalize', out, '-q', '--workers', '1'])).code).toBe(0);
    const work = path.join(out, '.mudm-work');
    // The work directory moved aside whole (then removed: the kill came first), and folders this tool did not leave.
    const leftover = `${work}.retiring-0123abcd`;
    const users = [`${work}.retiring-89abcdef`, `${work}.retiring-mine`];
    const leave = () => fs.cpSync(path.join(shardsDone, '.mudm-work'), leftover, { recursive: true });
    for (const u of users) {
      fs.mkdirSync(u);
      fs.writeFileSync(path.join(u, 'notes.txt'), 'mine');
    }
    const pyramid = contents(out);
    leave();
    const again = await step(['finalize', out, '--workers', '1']);
    expect([again.code, again.err.split('\n')[0]]).toEqual([0, `warning: ${out} is finalized already (a complete output, its work directory gone): nothing to do [finalized-already]`]);
    expect(fs.existsSync(leftover)).toBe(false);
    expect(contents(out)).toEqual(pyramid);
    leave();
    expect((await step(['build-shard', out, '--shard', '1', '-q'])).code).toBe(0);
    expect(fs.existsSync(leftover)).toBe(false);
    for (const u of users) expect(fs.readFileSync(path.join(u, 'notes.txt'), 'utf8')).toBe('mine');
  });
});

describe('plan --preview --image', () => {
  it('keeps the image as the previews take it: finalize draws them, the image moved away since, as a build on one machine does', async () => {
    const dir = tmpDir('mudm-steps');
    const image = path.join(dir, 'slide.png');
    await sharp({ create: { width: 2048, height: 2048, channels: 3, background: { r: 230, g: 200, b: 220 } } }).png().toFile(image);
    const local = path.join(dir, 'local');
    expect((await step(['build', CELLS, '-o', local, '--preview', '--image', image, '-q', '--unit-size', '512', '--max-zoom', '3', '--workers', '1'])).code).toBe(0);
    const out = path.join(dir, 'out');
    expect((await step(['plan', CELLS, '-o', out, ...PLAN, '--preview', '--image', image, '-q'])).code).toBe(0);
    // The image kept is a build's state: plan --force replaces it (it was taken for a file no build writes, exit 4).
    const again = await step(['plan', CELLS, '-o', out, ...PLAN, '--preview', '--image', image, '-q', '--force']);
    expect([again.code, again.err]).toEqual([0, '']);
    // A workflow's later steps run where the image is not (another machine, a staged copy of OUT), or after it moved.
    fs.renameSync(image, path.join(dir, 'moved.png'));
    for (const shard of ['0', '1']) expect((await step(['build-shard', out, '--shard', shard, '-q', '--workers', '1'])).code).toBe(0);
    const r = await step(['finalize', out, '-q', '--workers', '1']);
    expect([r.code, r.err]).toEqual([0, '']);
    const tiles = contents(out);
    expect(tiles.has('preview/image.jpg')).toBe(true);
    expect(tiles).toEqual(contents(local));
  });
});
