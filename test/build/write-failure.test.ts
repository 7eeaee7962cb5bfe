// A write that fails while tiles are written (a full disk) keeps what the build wrote, and --resume finishes it.
import { describe, expect, it } from 'vitest';
import { buildPyramid } from '../../src/build/pipeline.js';
import { exitCodeFor } from '../../src/cli/exit.js';
import { memorySource } from '../../src/io/read.js';
import { MemorySink } from '../../src/io/sink.js';
import { MemoryWorkDir } from '../../src/io/workdir-memory.js';
import { describeFsError, EXIT_OUTPUT, OutputError } from '../../src/report/errors.js';
import { squareCoords, withoutReport } from '../helpers/pyramid.js';

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
});
