// `mudm-tiles finalize OUT`: once every shard is done, tiles the coarse levels and writes overview, report, descriptor.
import { finalizeShardedBuild } from '../../build/pipeline.js';
import { UsageError } from '../../report/errors.js';
import { summaryLines } from '../../report/format.js';
import type { CommandContext } from '../command.js';
import { EXIT_OK } from '../exit.js';
import { interruptible, progressReporter, warnLost } from '../run-build.js';
import { localProcesses } from '../processes.js';

export const usage = 'DIR|FILE.pmtiles';

export async function run(ctx: CommandContext): Promise<number> {
  const { options, io, log, args } = ctx;
  if (args.length !== 1) throw new UsageError('finalize needs exactly one DIR (the output of mudm-tiles plan)');
  const progress = progressReporter(options, io);
  return interruptible(log, 'finalize', progress, async (signal) => {
    // The processes: a second finalize, or a build --force, must not work in this work directory while this one runs.
    const report = await finalizeShardedBuild({ ...options, out: args[0] }, { onProgress: progress.onProgress, onWarning: (m, f) => log.warn(m, f), onInfo: (m, f) => log.notice(m, f), signal, processes: localProcesses });
    progress.end();
    if (!options.quiet) {
      if (log.format === 'json') log.info('finalized', { event: 'done', out: args[0], tiles: { total: report.tiles.total, bytes: report.tiles.bytes } });
      else io.stdout.write(`${summaryLines(report, args[0], 'finalize').join('\n')}\n`);
    } else {
      // As build -q: the sharded build's one line under -q, at its end.
      warnLost(report.features, io, log);
    }
    return EXIT_OK;
  });
}
