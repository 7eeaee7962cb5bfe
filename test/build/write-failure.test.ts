// A write that fails while tiles are written (a full disk) keeps what the build wrote, and --resume finishes it.
import { describe, expect, it } from 'vitest';
import path from 'node:path';
import { buildPyramid, buildShard, finalizeShardedBuild, planShardedBuild } from '../../src/build/pipeline.js';
import { exitCodeFor } from '../../src/cli/exit.js';
import { memorySource } from '../../src/io/read.js';
import { MemorySink } from '../../src/io/sink.js';
import { MemoryWorkDir } from '../../src/io/workdir-memory.js';
import { DiskWorkDir } from '../../src/io/workdir.js';
import { describeFsError, EXIT_OUTPUT, OutputError } from '../../src/report/errors.js';
import { squareCoords, tmpDir, withoutReport } from '../helpers/pyramid.js';

const OPTS = { imageSize: '2048,2048', unitSize: 256, workers: 1, memoryBudget: 64 * 1024 * 1024 } as const;

/** Squares spread over the world, so that the build has many units. */
const TEXT = JSON.stringify({
  type: 'FeatureCollection',
  features: Array.from({ length: 64 }, (_, i) => ({
    type: 'Feature', id: i + 1, properties: { n: i }, geometry: { type: 'Polygon', coordinates: squareCoords((i % 8) * 256 + 40, Math.floor(i / 8) * 256 + 40, 60) },
  })),
});
const inputs = () => [{ source: memorySource('cells.json', TEXT) }];

/** A sink on a disk that fills after `room` files: each write past it fails as the file system says it (errno `code`). */
class FillingSink extends MemorySink {
  constructor(public room: number, private readonly code = 'ENOSPC') {
    super();
  }
  override async write(relPath: string, bytes: Uint8Array | string): Promise<void> {
    if (this.room <= 0) throw describeFsError(Object.assign(new Error(`${this.code}: write`), { code: this.code }), `/disk/out/${relPath}`);
    this.room--;
    await super.write(relPath, bytes);
  }
  /** What it holds back is flushed on close, which a full disk fails too (an archive's part). */
  async close(): Promise<void> {
    if (this.room <= 0) throw describeFsError(Object.assign(new Error(`${this.code}: write`), { code: this.code }), '/disk/out/part');
  }
}

describe('a write failing while tiles are written', () => {
  it('disk full: exit 4 naming the file and the full disk; the tiles and the state are kept, and --resume, given space, gives the bytes of a build run through', async () => {
    const whole = new MemorySink();
    await buildPyramid(inputs(), OPTS, { sink: whole });
    const sink = new FillingSink(40), work = new MemoryWorkDir();
    const error = await buildPyramid(inputs(), OPTS, { sink, work }).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(OutputError);
    expect(exitCodeFor(error)).toBe(EXIT_OUTPUT);
    expect((error as Error).message).toMatch(/^cannot write \/disk\/out\/\S+: no space left on device\. The disk is full: what the build wrote is kept \(its tiles so far, and its state in the work directory\); free some space, then run the same build with --resume to continue it$/);
    // Nothing written is lost: the 40 files stand, and so do the plan and the markers of the units finished.
    expect(sink.files.size).toBe(40);
    expect(work.exists('plan.json')).toBe(true);
    expect(work.list('units').length).toBeGreaterThan(0);
    sink.room = Infinity;
    const report = await buildPyramid(inputs(), { ...OPTS, resume: true }, { sink, work });
    expect(report.run.resumed).toBeGreaterThan(0);
    expect(withoutReport(sink)).toEqual(withoutReport(whole));
  });

  it('any other write error (no permission) keeps them too, and says that --resume continues once the build can write there', async () => {
    const sink = new FillingSink(10, 'EACCES'), work = new MemoryWorkDir();
    await expect(buildPyramid(inputs(), OPTS, { sink, work })).rejects.toThrow(/^cannot write \/disk\/out\/\S+: permission denied\. What the build wrote is kept \(its tiles so far, and its state in the work directory\); once the build can write there, run the same build with --resume to continue it$/);
    expect(sink.files.size).toBe(10);
    expect(work.exists('plan.json')).toBe(true);
  });

  it('without a work directory of the caller\'s, nothing can be resumed, and the message does not say to', async () => {
    const sink = new FillingSink(10);
    await expect(buildPyramid(inputs(), OPTS, { sink })).rejects.toThrow(/^cannot write \/disk\/out\/\S+: no space left on device$/);
  });

  it('a shard or finalize on a full disk keeps what it wrote and says to run that step again; run again with space, they give the bytes of a build run through', async () => {
    const whole = new MemorySink();
    await buildPyramid(inputs(), OPTS, { sink: whole });
    const out = tmpDir('mudm-shard-full');
    const sink = new FillingSink(Infinity), work = new DiskWorkDir(path.join(out, '.mudm-work'));
    await planShardedBuild(inputs(), { ...OPTS, out, shards: 2 }, { sink, work });
    const full = (step: string, again: string) => new RegExp(`^cannot write /disk/out/\\S+: no space left on device\\. The disk is full: what ${step} wrote is kept \\(its tiles so far, and its state in \\S+\\.mudm-work\\); free some space, then ${again} to continue it$`);
    sink.room = 5;
    const shard = await buildShard({ out, workers: 1 }, 1, { sink, work }).then(() => undefined, (e: unknown) => e);
    expect(exitCodeFor(shard)).toBe(EXIT_OUTPUT);
    expect((shard as Error).message).toMatch(full('shard 1', 'run build-shard --shard 1 again'));
    sink.room = Infinity;
    for (const i of [1, 0]) await buildShard({ out, workers: 1 }, i, { sink, work });
    sink.room = 2;
    await expect(finalizeShardedBuild({ out, workers: 1 }, { sink, work })).rejects.toThrow(full('finalize', 'run finalize again'));
    expect(work.exists('plan.json'), 'the plan kept for the next finalize').toBe(true);
    sink.room = Infinity;
    await finalizeShardedBuild({ out, workers: 1 }, { sink, work });
    expect(withoutReport(sink)).toEqual(withoutReport(whole));
  });

  it('another write error of a shard (no permission) says to run it again once it can write there', async () => {
    const out = tmpDir('mudm-shard-denied');
    const sink = new FillingSink(Infinity, 'EACCES'), work = new DiskWorkDir(path.join(out, '.mudm-work'));
    await planShardedBuild(inputs(), { ...OPTS, out, shards: 2 }, { sink, work });
    sink.room = 3;
    await expect(buildShard({ out, workers: 1 }, 0, { sink, work })).rejects.toThrow(/^cannot write \/disk\/out\/\S+: permission denied\. What shard 0 wrote is kept \(its tiles so far, and its state in \S+\.mudm-work\); once it can write there, run build-shard --shard 0 again to continue it$/);
  });
});
