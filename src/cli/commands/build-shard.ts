// `mudm-tiles build-shard OUT --shard I`: tiles one shard's units (I from --shard or JOB_COMPLETION_INDEX); idempotent.
import { buildShard } from '../../build/pipeline.js';
import { UsageError } from '../../report/errors.js';
import type { CommandContext } from '../command.js';
import { EXIT_OK } from '../exit.js';
import { interruptible, progressReporter } from '../run-build.js';
import { localProcesses } from '../processes.js';

export const usage = 'DIR|FILE.pmtiles --shard I';

export async function run(ctx: CommandContext): Promise<number> {
  const { options, io, log, args } = ctx;
  if (args.length !== 1) throw new UsageError('build-shard needs exactly one DIR (the output of mudm-tiles plan)');
  const env = io.env.JOB_COMPLETION_INDEX;
  if (options.shard === undefined && env !== undefined && !/^\d+$/.test(env)) {
    throw new UsageError(`build-shard: JOB_COMPLETION_INDEX is ${JSON.stringify(env)}, not a shard number (0, 1, …); give --shard I`);
  }
  const shard = options.shard ?? (env !== undefined ? Number(env) : undefined);
  if (shard === undefined) throw new UsageError('build-shard needs --shard I (or JOB_COMPLETION_INDEX in the environment)');
  const progress = progressReporter(options, io);
  return interruptible(log, 'build-shard', progress, async (signal) => {
    const from = options.shard === undefined ? 'JOB_COMPLETION_INDEX' : '--shard';
    const r = await buildShard({ ...options, out: args[0] }, shard, { onProgress: progress.onProgress, onWarning: (m, f) => log.warn(m, f), signal, processes: localProcesses }, from);
    progress.end();
    if (!r.finalized) log.info(`shard ${shard}: ${r.units} unit(s), ${r.skipped} already done`, { event: 'shard-done', shard, ...r });
    return EXIT_OK;
  });
}
