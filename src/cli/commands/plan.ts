// `mudm-tiles plan INPUT... -o OUT --shards N`: one streaming pass fixing world, zooms, fields and work units for shards.
import { planShardedBuild } from '../../build/pipeline.js';
import { UsageError } from '../../report/errors.js';
import type { CommandContext } from '../command.js';
import { EXIT_OK } from '../exit.js';
import { resolveInputs } from '../inputs.js';
import { interruptible, progressReporter, removalLogger, warnLost } from '../run-build.js';
import { localProcesses } from '../processes.js';

export const usage = 'INPUT... -o DIR|FILE.pmtiles --shards N';

export async function run(ctx: CommandContext): Promise<number> {
  const { options, io, log } = ctx;
  const out = options.out;
  if (!out) throw new UsageError('plan needs an output directory: -o DIR');
  const inputs = resolveInputs(ctx.args, options, io, (m, f) => log.warn(m, f));
  const progress = progressReporter(options, io);
  // A plan stopped by a signal leaves nothing: the half-read records are no plan that shards could use.
  return interruptible(log, 'plan', progress, async (signal) => {
    // --input and --manifest are in `inputs` now.
    const r = await planShardedBuild(inputs, { ...options, input: [], manifest: undefined }, {
      onProgress: progress.onProgress, onWarning: (m, f) => log.warn(m, f), onInfo: (m, f) => log.notice(m, f), onRemoved: removalLogger(log, out), processes: localProcesses, signal,
    });
    progress.end();
    const { lost, ...planned } = r;
    if (r.again) log.info(`${r.workDir} holds this plan already, of the same inputs and options: nothing to do; ${r.features} features in ${r.units} work unit(s) over ${r.shards} shard(s), for build-shard and finalize`, { event: 'planned-already', ...planned });
    else log.info(`planned ${r.features} features into ${r.units} work unit(s) over ${r.shards} shard(s) in ${r.workDir}`, { event: 'planned', ...planned });
    // As build -q says it, -q or not: a plan prints no summary, and finalize, which does, may run days later elsewhere.
    warnLost(lost, io, log);
    return EXIT_OK;
  }, 'nothing is kept: run plan again');
}
