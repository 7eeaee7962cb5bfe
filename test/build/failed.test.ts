// What a failed build keeps of its work directory, and what its error then says: a --resume keeps what it took over, whatever stopped it.
import { describe, expect, it } from 'vitest';
import { failedBuild } from '../../src/build/failed.js';
import { MemoryWorkDir } from '../../src/io/workdir-memory.js';
import { describeError, exitCodeFor } from '../../src/cli/exit.js';
import { DataError, EXIT_INTERNAL, EXIT_INVALID, EXIT_UNREADABLE, ReadError } from '../../src/report/errors.js';

const kept = '. This --resume keeps the interrupted build\'s work (its tiles so far, and its state in the work directory): once the cause is fixed, run the same build with --resume again to continue it; --force (without --resume) starts over';
const resumed = { planned: false, tiling: false, resume: true, callersWork: true };

describe('failedBuild', () => {
  it('keeps the work a --resume took over when the input fails it, the error of the same class and exit code, saying so', () => {
    const read = failedBuild(new ReadError('in.json', 3, 7, 'unexpected end of input'), new MemoryWorkDir(), resumed);
    expect(read.keep).toBe(true);
    expect(read.error).toBeInstanceOf(ReadError);
    expect([exitCodeFor(read.error), (read.error as ReadError).message, (read.error as ReadError).where]).toEqual([EXIT_UNREADABLE, `in.json:3:7: unexpected end of input${kept}`, 'in.json:3:7']);
    const data = failedBuild(new DataError('feature 3 is invalid'), new MemoryWorkDir(), { ...resumed, planned: true, tiling: true });
    expect([data.keep, exitCodeFor(data.error), (data.error as Error).message]).toEqual([true, EXIT_INVALID, `feature 3 is invalid${kept}`]);
  });

  it('says so of an internal error too, where the CLI prints it: with its stack', () => {
    const failed = failedBuild(new TypeError('x is undefined'), new MemoryWorkDir(), resumed);
    expect([failed.keep, exitCodeFor(failed.error)]).toEqual([true, EXIT_INTERNAL]);
    expect(describeError(failed.error)).toMatch(new RegExp(`^internal error: TypeError: x is undefined${kept.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\n    at `));
  });

  it('a new build that fails so keeps nothing, its error as it was', () => {
    const err = new DataError('feature 3 is invalid');
    expect(failedBuild(err, new MemoryWorkDir(), { ...resumed, resume: false, planned: true })).toEqual({ keep: false, error: err });
    expect(err.message).toBe('feature 3 is invalid');
  });
});
