// What a failed build or step keeps of its work directory (for --resume, or the step run again), and the error it
// ends with, saying so.
import { InterruptedError, OutputError, RemovalError, UsageError, WorkStateError } from '../report/errors.js';
import type { WorkDir } from '../io/workdir.js';
import { where } from './state.js';

/**
 * How far a build got when it failed (its plan written; its output opened, what --force removes removed, and tiles
 * written), and whether its work directory is the caller's (`io.work`).
 */
export interface FailedAt { planned: boolean; tiling: boolean; resume: boolean; callersWork: boolean }

/**
 * What a failed build keeps, and the error it ends with. An interrupted build, a --resume refused (inputs changed,
 * another version, a link at a tile's path), and a build whose write failed once it was writing tiles (a full disk,
 * no permission) keep what a later --resume needs: the tiles written and the units' markers; the write error then
 * says so. So does a --force build whose removal of an earlier build's files stopped at one it could not remove
 * (`beginOutput` says so): its plan and its mark that the removal is under way, so that --resume finishes the removal
 * and a plain build or a step of a sharded one says what happened, as when such a build is killed. A new build stopped
 * before its plan was written has nothing to continue: it leaves nothing, and says so; nor does a build whose work
 * directory was its own, in memory (a caller's sink, no `work`). A --resume keeps the work it took over whatever
 * stopped it: what it took over was the interrupted build's, and stays what a later --resume continues.
 */
export function failedBuild(err: unknown, work: WorkDir, at: FailedAt): { keep: boolean; error: unknown } {
  const reachable = at.callersWork || work.root !== undefined;
  if (err instanceof InterruptedError) {
    const keep = (at.planned || at.resume) && reachable;
    return { keep, error: keep ? err : new InterruptedError(err.message, false) };
  }
  // Its removal of what an earlier build wrote stopped (a new --force, or a --resume finishing one): `beginOutput` said how to go on.
  if (err instanceof RemovalError && err.advised && (at.planned || at.resume) && reachable) return { keep: true, error: err };
  // A system call that failed (errno): what the build wrote until then stands, and the build goes on from it.
  if (failedWrite(err) && (at.tiling || at.resume) && reachable) return { keep: true, error: failedStep(err, work, 'the build', 'run the same build with --resume') };
  // A --resume refused (a UsageError, or an OutputError such as a link at a tile's path) says how to go on already.
  if (at.resume && (err instanceof UsageError || err instanceof OutputError)) return { keep: true, error: err };
  // Any other end of a --resume (an input unreadable or changed since, --strict or a smaller --memory-budget refusing
  // a feature, a mask that does not decode) is of this run, not of the work it took over: that work stays resumable.
  if (at.resume && reachable) return { keep: true, error: keptForResume(err, work) };
  return { keep: false, error: err };
}

/**
 * `err` saying that the interrupted build's work is kept, and how to go on: the same error (its class, so its exit
 * code, and its fields), its message extended. A message printed with its stack (an internal error) is extended there too.
 */
function keptForResume(err: unknown, work: WorkDir): unknown {
  if (!(err instanceof Error)) return err;
  // The stack is read first: V8 formats it when first read, from the message then.
  const { message: before, stack } = err;
  err.message = `${before}. This --resume keeps the interrupted build's work (its tiles so far, and its state in ${where(work)}): `
    + 'once the cause is fixed, run the same build with --resume again to continue it; --force (without --resume) starts over';
  if (typeof stack === 'string' && before !== '') err.stack = stack.replace(before, err.message);
  return err;
}

/** A write the system refused (errno: a full disk, no permission), not a refusal of the tool's own. */
const failedWrite = (err: unknown): OutputError | undefined => (err instanceof OutputError && !(err instanceof WorkStateError) && err.errno !== undefined ? err : undefined);

/**
 * A step (`who`: the build, shard I, finalize) stopped by a failed write keeps what it wrote: its error says so, and
 * how to go on (`again`) once it can write; any other error is as it was.
 */
export function failedStep(err: unknown, work: WorkDir, who: string, again: string): unknown {
  const failed = failedWrite(err);
  if (failed?.errno === undefined) return err;
  const full = failed.errno === 'ENOSPC' || failed.errno === 'EDQUOT';
  const kept = `what ${who} wrote is kept (its tiles so far, and its state in ${where(work)})`;
  const more = full
    ? `. The disk is full: ${kept}; free some space, then ${again} to continue it`
    : `. ${kept[0].toUpperCase()}${kept.slice(1)}; once ${who === 'the build' ? 'the build' : 'it'} can write there, ${again} to continue it`;
  return new OutputError(`${failed.message}${more}`, failed.path, failed.errno);
}
