// `plan` run again over its own finished plan with the same inputs and options (a workflow engine retrying the step): nothing to do.
import type { BuildConfig, Options } from '../options.js';
import { OWNER_FILE, REMOVING_FILE, type WorkDir } from '../io/workdir.js';
import type { LostCounts } from '../report/types.js';
import { plannedFeatures } from './report.js';
import { findPlan, fingerprintLines, fingerprintOfLines, type FingerprintInput, type PlanFile } from './state.js';

/** What `plan` says of a plan: the features it read, and (`lost`) those its pyramid will not hold. */
export interface Planned { units: number; shards: number; features: number; lost: LostCounts; workDir: string }

/** What `plan` says of the plan it finds made already. */
export interface PlannedAlready extends Planned { again: true }

/**
 * The plan in `work` when it is whole and is the one this `plan` would write: made for shards, of the same inputs
 * (each with its size and modification time: standard input has none, so never) and options, the same shard count,
 * name and previews. An engine that saw the step fail after its end (a lost pod, a timeout at the very end) runs it
 * again; refusing then (exit 4, "planned for shards") failed the workflow over a plan that was there and right.
 */
export function plannedAlready(work: WorkDir, inputs: readonly FingerprintInput[], config: BuildConfig): PlannedAlready | undefined {
  const o = config.options;
  if (work.root === undefined || inputs.some((i) => i.fingerprint === undefined)) return undefined;
  if (!work.exists('') || work.exists(OWNER_FILE) || work.exists(REMOVING_FILE)) return undefined;
  let planFile: PlanFile | undefined;
  try {
    planFile = findPlan(work);
  } catch {
    return undefined; // Another version's plan: the usual refusal says so.
  }
  if (planFile?.forShards !== true || planFile.shards !== o.shards) return undefined;
  if (planFile.fingerprint !== fingerprintOfLines(fingerprintLines(inputs, config))) return undefined;
  if (JSON.stringify(planFile.meta) !== JSON.stringify(metaOf(o)) || planFile.preview.enabled !== o.preview) return undefined;
  return { units: planFile.units.length, shards: planFile.shards, features: planFile.read.read, lost: plannedFeatures(planFile.read), workDir: work.root, again: true };
}

/** The descriptor's texts a plan keeps, as `plan` writes them. */
export function metaOf(o: Options): PlanFile['meta'] {
  return { name: o.name, description: o.description, attribution: o.attribution, version: o.version, baseUrl: o.baseUrl };
}
