// What a step of a sharded build says of a work directory that holds no plan for shards: a plain build's (running,
// interrupted, stopped before its plan or during its --force removal), or one whose command stopped before its plan.
import type { WorkDir } from '../io/workdir.js';
import { OWNER_FILE, REMOVING_FILE } from '../io/workdir.js';
import type { Owner } from '../io/owner-file.js';
import { StateUsageError, WorkStateError } from '../report/errors.js';
import { findPlan, where } from './state.js';

/** How a step refused on an output that `plan` did not make begins: what it has nothing of (`shard`: build-shard's). */
export const nothingFor = (shard: number | undefined) => (shard === undefined ? 'finalize: nothing to finalize' : `build-shard: no shard ${shard} to tile`);

/** What starts a sharded build of `out` where something else is (`how`: instead of it, or anew): the same advice wherever a step is refused so. */
export const shardedInstead = (out: string, how = 'instead') => `to build it in shards ${how}, run mudm-tiles plan INPUT... -o ${out} --shards N --force, then build-shard and finalize`;

/**
 * Refuses, before a step loads its plan or records itself anywhere, a work directory that `plan` did not make or has
 * not planned yet, saying whose it is and what to run. A plain build's, as its plan or, before it has one, its owner
 * record says (`command`), is refused alike whatever it got to (exit 2, as on a pyramid `build` finished: another
 * command is needed, and nothing there is changed, so `build --resume` goes on); a plan's that has none yet, or one
 * whose record does not say (an earlier version's), is a work state with nothing to tile (exit 4). Anything else is
 * left to `loadPlan`.
 */
export function refuseNotPlanned(work: WorkDir, out: string | undefined, shard?: number): void {
  const planFile = findPlan(work);
  if (planFile?.forShards === true) return;
  const owner = work.readJson<Owner>(OWNER_FILE);
  if (planFile === undefined && owner === undefined) return;
  const at = out ?? where(work);
  const live = work.liveOwner(OWNER_FILE);
  // A --force run marks its removal of the earlier build's files from its start until it has removed them.
  const force = work.exists(REMOVING_FILE) ? ' --force' : '';
  if (planFile !== undefined || owner?.command === 'build') {
    const state = live
      ? `still running (${live.who})${planFile ? '' : ', reading its inputs'}: wait for it to end, it writes the whole pyramid itself`
      : planFile === undefined
        ? `stopped before it wrote its plan (killed while reading its inputs), so there is nothing to continue: mudm-tiles build INPUT... -o ${at}${force} starts it again, replacing that state`
        : force
          ? `interrupted by build --force before it had removed what an earlier build wrote in ${at} (some of it is left): mudm-tiles build INPUT... -o ${at} --resume continues it, with the inputs and options it was given, removing the rest first (build --force again starts over)`
          : `interrupted: mudm-tiles build INPUT... -o ${at} --resume continues it, with the inputs and options it was given`;
    throw new StateUsageError(`${nothingFor(shard)}: ${at} holds no plan for shards but the work directory of a plain build (${where(work)}, which build made, not plan), ${state}; ${shardedInstead(at)}`);
  }
  if (owner?.command === 'plan') {
    throw new WorkStateError(live
      ? `${nothingFor(shard)} yet: the plan in ${where(work)} is still being written (${live.who}): wait for plan to end`
      : `${nothingFor(shard)}: plan${force} was stopped before it had written the plan in ${where(work)} (killed while reading its inputs), so there is nothing to tile: run mudm-tiles plan INPUT... -o ${at} --shards N${force} again`, work.root);
  }
  // A record of an earlier version, which does not say which command made it: both are said.
  const who = 'a build or a plan (its record, of an earlier mudm-tiles, does not say which)';
  throw new WorkStateError(live
    ? `${nothingFor(shard)} yet: ${where(work)} holds no plan: ${who} is still reading its inputs there (${live.who}): wait for it to end`
    : `${nothingFor(shard)}: ${where(work)} holds no plan: ${who} stopped there before it wrote one (killed while reading its inputs), so there is nothing to continue either way: `
      + `run it again, mudm-tiles plan INPUT... -o ${at} --shards N${force} for shards, or mudm-tiles build INPUT... -o ${at}${force} for a plain build`, work.root);
}
