// Who may touch a work directory: a build still running, another build's state, a step of a sharded build another
// process runs; each refused before anything is touched.
import { OWNERS_DIR, REMOVING_FILE, type WorkDir } from '../io/workdir.js';
import { WorkStateError } from '../report/errors.js';
import { claimedMessage, stillRunning } from './state.js';

/**
 * --force would remove, and --resume take over, the state of a build another process on this machine is still
 * running: that build would then fail on files gone from under it. Refused before anything is touched.
 */
export function refuseRunning(work: WorkDir, force: boolean, resume: boolean): void {
  if (!force && !resume) return;
  const owner = work.liveOwner();
  if (owner) throw stillRunning(work, owner, force ? '--force' : '--resume');
}

/**
 * A new build's work directory (`command`: build or plan, recorded there): another build's state (interrupted,
 * running, planned for shards) is removed only with --force, else refused before anything is touched.
 */
export function startOver(work: WorkDir, force: boolean, command: 'build' | 'plan'): void {
  // Looked at again just before it goes: another build may have taken the place since the first look.
  if (force) refuseRunning(work, true, false);
  // Killed while reading (a plan Job's pod lost, kill -9): nothing to continue, and nobody's any more.
  if (force || work.abandoned()) work.retire();
  try {
    work.claim(command);
  } catch (err) {
    throw err instanceof WorkStateError ? new WorkStateError(claimedMessage(work), work.root) : err;
  }
  // From the start: a kill anywhere before the removal ends leaves the mark, which --resume and shards go by.
  if (force) work.writeJson(REMOVING_FILE, { by: 'force', command });
}

/**
 * Another build's work directory, found before the output is looked at: its state says more (what goes on with it)
 * than that the output (`out`, as the message names it) is not empty.
 */
export function refuseClaimed(work: WorkDir, force: boolean, resume: boolean, out?: string): void {
  const foreign = work.foreign();
  if (foreign) throw new WorkStateError(foreign, work.root);
  if (!force && !resume && work.exists('') && !work.abandoned()) throw new WorkStateError(claimedMessage(work, out), work.root);
}

/**
 * Records this process as running step `name` of a sharded build (`owners/NAME.json`); refused (`busy`, then who and
 * how to go on) while another process on this machine runs it: two would write its parts at once.
 */
export function ownStep(work: WorkDir, name: string, busy: string): void {
  const running = work.claimOwner(`${OWNERS_DIR}/${name}.json`);
  if (running) {
    work.release();
    throw new WorkStateError(`${busy} (${running.who}): wait for it to end or stop it first (if it does not run, remove ${running.file})`, work.root);
  }
}
