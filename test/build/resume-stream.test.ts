// A --resume of a build read from standard input: the same bytes continue it; other bytes that plan alike are refused.
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { buildPyramid } from '../../src/build/pipeline.js';
import { exitCodeFor } from '../../src/cli/exit.js';
import { stdinSource } from '../../src/io/read.js';
import { MemorySink } from '../../src/io/sink.js';
import { MemoryWorkDir } from '../../src/io/workdir-memory.js';
import { EXIT_USAGE, InterruptedError } from '../../src/report/errors.js';
import { squareCoords, withoutReport } from '../helpers/pyramid.js';

const OPTS = { imageSize: '2048,2048', unitSize: 256, workers: 1 } as const;

/** 64 squares over the world (many units), each of class `name`: two names of one length plan alike. */
const text = (name: string): string => `${Array.from({ length: 64 }, (_, i) => JSON.stringify({
  type: 'Feature', id: i + 1, properties: { class: name },
  geometry: { type: 'Polygon', coordinates: squareCoords((i % 8) * 256 + 40, Math.floor(i / 8) * 256 + 40, 60) },
})).join('\n')}\n`;

const stdin = (s: string) => [{ source: stdinSource(Readable.from([Buffer.from(s)])) }];

/** A sink whose build is stopped (as by SIGTERM) once it has written `room` files. */
class StoppingSink extends MemorySink {
  readonly controller = new AbortController();
  constructor(private readonly room: number) {
    super();
  }
  override async write(relPath: string, bytes: Uint8Array | string): Promise<void> {
    await super.write(relPath, bytes);
    if (this.files.size >= this.room) this.controller.abort();
  }
}

/** A build of `s` on stdin stopped part-way: its sink and work directory, for a --resume. */
async function interrupted(s: string): Promise<{ sink: StoppingSink; work: MemoryWorkDir }> {
  const sink = new StoppingSink(20), work = new MemoryWorkDir();
  const error = await buildPyramid(stdin(s), OPTS, { sink, work, signal: sink.controller.signal }).then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(InterruptedError);
  expect(work.exists('plan.json')).toBe(true);
  return { sink, work };
}

describe('--resume of a build read from stdin', () => {
  it('other bytes of the same shape (a class renamed) are refused, exit 2, naming stdin; the work is kept', async () => {
    const { sink, work } = await interrupted(text('tumor'));
    const written = new Map(sink.files);
    const error = await buildPyramid(stdin(text('TUMOR')), { ...OPTS, resume: true }, { sink, work }).then(() => undefined, (e: unknown) => e);
    expect(exitCodeFor(error)).toBe(EXIT_USAGE);
    expect((error as Error).message).toBe('--resume: the bytes read from stdin differ from those the interrupted build in the work directory read (another SHA-256): its tiles so far are of those; give it the same bytes, or run again without --resume');
    expect(sink.files).toEqual(written);
    expect(work.exists('plan.json')).toBe(true);
  });

  it('the same bytes continue it, to the pyramid of a build run through', async () => {
    const whole = new MemorySink();
    await buildPyramid(stdin(text('tumor')), OPTS, { sink: whole });
    const { sink, work } = await interrupted(text('tumor'));
    const report = await buildPyramid(stdin(text('tumor')), { ...OPTS, resume: true }, { sink, work });
    expect(report.run.resumed).toBeGreaterThan(0);
    expect(withoutReport(sink)).toEqual(withoutReport(whole));
  });
});
