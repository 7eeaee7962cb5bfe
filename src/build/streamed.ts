// A --resume's check of the inputs read as streams (standard input): by the SHA-256 of their bytes, which a plan keeps.
import type { WorkDir } from '../io/workdir.js';
import { StateUsageError } from '../report/errors.js';
import { where, type PlanFile } from './state.js';

/** What a plan keeps of the inputs read as streams: `name NUL sha256` each, in input order; none without a stream. */
export function streamDigests(inputs: readonly { source: { name: string; digest?: () => string | undefined } }[]): string[] | undefined {
  const lines = inputs.flatMap((i) => {
    const hex = i.source.digest?.();
    return hex === undefined ? [] : [`${i.source.name}\0${hex}`];
  });
  return lines.length > 0 ? lines : undefined;
}

/**
 * A resumed build's streamed inputs must be the bytes the interrupted one read: its tiles so far are of those, and
 * other bytes of the same shape (a class renamed, a value changed) plan alike, so the plan cannot tell.
 */
export function checkSameStreams(previous: PlanFile, streamed: readonly string[] | undefined, work: WorkDir): void {
  const was = previous.streamed ?? [], is = streamed ?? [];
  const differs = is.find((line, k) => line !== was[k]) ?? (was.length !== is.length ? was[is.length] : undefined);
  if (differs === undefined) return;
  const name = differs.slice(0, differs.indexOf('\0'));
  throw new StateUsageError(`--resume: the bytes read from ${name} differ from those the interrupted build in ${where(work)} read (another SHA-256): its tiles so far are of those; give it the same bytes, or run again without --resume`);
}
