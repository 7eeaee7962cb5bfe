// The plan's level-0 records in the work directory, which shards and finalize read: what plan wrote of them, checked
// before a step writes anything, and what a record found cut short while a unit reads it ends the step with.
import path from 'node:path';
import type { WorkDir } from '../io/workdir.js';
import { WorkStateError } from '../report/errors.js';
import { recordFileName, type SpillingStore } from '../stages/partition.js';
import type { UnitPlan } from '../stages/plan.js';
import { SHARED_FILE } from '../stages/shared-records.js';
import { where, type PlanFile } from './state.js';

/** Where `plan` writes the level-0 records in the work directory, for shards (other processes) to read. */
export const PLANNED_RECORDS = 'level-0';

/** What to do about records not as plan wrote them, whichever way they were lost (`who`: the step). */
const redo = (who: string) => `give ${who} the work directory whole, every record of ${PLANNED_RECORDS} as plan wrote it, or plan again with plan --force`;

/** The sizes of the record files `store` wrote (flushed), by key, for the plan to keep. */
export function recordSizes(store: SpillingStore): Record<string, number> {
  return Object.fromEntries(store.keys().map((k) => [k, store.fileBytesOf(k)]));
}

/**
 * Shards read the planned records from the work directory's `level-0`, where `plan` writes them (finalize reads
 * the units' records for the level above from their markers, and needs level-0 only where one is tiled again); a
 * `build` keeps them in its memory, or spills them elsewhere (`spill/`, --tmp-dir), removed when it is interrupted.
 * Every record `units` read must be there, and of the size plan wrote (where the plan says), checked before anything
 * is written: one lost on the way (a merge of the shards' outputs that dropped a few) or cut short (a copy between
 * workflow steps that stopped early, an upload that lost its tail) would stop a worker far into the step.
 */
export function refuseUnplanned(work: WorkDir, command: string, units: readonly UnitPlan[], plan: Pick<PlanFile, 'sharedBytes' | 'recordBytes'>): void {
  const why = command === 'finalize' ? "which finalize reads to tile a zoom anew where the shards' tiles pass the tile budget" : 'which its units read';
  if (!work.exists(PLANNED_RECORDS)) {
    // A plan's (a build's work directory is refused before: not-planned.ts `refuseNotPlanned`): its records went missing on
    // the way, as a merge of the shards' outputs that left them out does.
    const next = work.list('shards').length > 0 ? "give it the work directory whole, the records with the shards' markers" : redo('it');
    throw new WorkStateError(`${command}: ${where(work)} lacks the plan's records (${PLANNED_RECORDS}), ${why}: ${next}`, work.root);
  }
  const wanted: [string, number | undefined][] = [...new Set(units.flatMap((u) => u.sources))].map((k) => [recordFileName(k), plan.recordBytes?.[k]]);
  if ((plan.sharedBytes ?? 0) > 0) wanted.push([SHARED_FILE, plan.sharedBytes]);
  const there = new Set(work.list(PLANNED_RECORDS));
  const lost: string[] = [], resized: string[] = [];
  for (const [file, bytes] of wanted) {
    const at = path.join(where(work), PLANNED_RECORDS, file);
    // A stat only where the plan kept a size (87,000 files: 0.4 s here, more on a network volume).
    const size = there.has(file) && bytes !== undefined ? work.size(`${PLANNED_RECORDS}/${file}`) : undefined;
    if (!there.has(file) || (bytes !== undefined && size === undefined)) lost.push(at);
    else if (bytes !== undefined && size !== bytes) resized.push(`${at}: ${size} bytes, plan wrote ${bytes}`);
  }
  const named = (list: string[], sep: string) => list.slice(0, 3).join(sep) + (list.length > 3 ? `${sep}…` : '');
  if (lost.length > 0) {
    throw new WorkStateError(`${command}: ${lost.length} of the plan's records ${lost.length === 1 ? 'is' : 'are'} missing (${named(lost, ', ')}), ${why}: ${redo('it')}`, work.root);
  }
  if (resized.length === 0) return;
  throw new WorkStateError(
    `${command}: ${resized.length} of the plan's records ${resized.length === 1 ? 'is not of the size' : 'are not of the sizes'} plan wrote (${named(resized, '; ')}), ${why}: `
    + `cut short or changed on the way (a copy that stopped early, an upload that lost its tail); ${redo('it')}`,
    work.root,
  );
}

/**
 * A record file found cut short or missing while a unit read it (`failure`, as a worker reported it): a plan's,
 * changed after the step checked it (or of a plan that kept no sizes), or spilled by this build and changed under it.
 */
export function unreadableRecords(work: WorkDir, failure: { path: string; message: string }): WorkStateError {
  const planned = work.root !== undefined && path.dirname(failure.path) === path.join(work.root, PLANNED_RECORDS);
  const next = planned ? `it was cut short or changed since plan wrote it; ${redo('the step')}` : 'it changed while the build ran (another process writing there?); run the build again';
  return new WorkStateError(`${failure.message}: ${next}`, failure.path);
}
