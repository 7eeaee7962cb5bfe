// `mudm-tiles build INPUT... -o OUT`: the whole build on this machine (plan, every shard in the local pool, finalize).
import { buildPyramid } from '../../build/pipeline.js';
import { abortableSource } from '../../io/source.js';
import { InterruptedError, UsageError } from '../../report/errors.js';
import { isArchiveFile } from '../../options.js';
import { summaryLines } from '../../report/format.js';
import type { CommandContext } from '../command.js';
import { EXIT_OK } from '../exit.js';
import { resolveInputs } from '../inputs.js';
import { handleSignals, progressReporter, removalLogger, signalExitCode, warnLost } from '../run-build.js';
import { localProcesses } from '../processes.js';
import { fullCollection } from '../../worker/collector.js';

export const usage = 'INPUT... -o DIR|FILE.pmtiles';

export async function run(ctx: CommandContext): Promise<number> {
  const { options, io, log } = ctx;
  if (!options.out) throw new UsageError('build needs an output: -o DIR, or -o FILE.pmtiles for one archive');
  const signals = handleSignals(log);
  const progress = progressReporter(options, io);
  try {
    // A signal must stop a read blocked on standard input or a FIFO too, not only the work between reads.
    const inputs = resolveInputs(ctx.args, options, io, (m, f) => log.warn(m, f)).map((i) => ('open' in i.source ? { ...i, source: abortableSource(i.source, signals.signal) } : i));
    // --input and --manifest are in `inputs` now.
    const report = await buildPyramid(inputs, { ...options, input: [], manifest: undefined }, { onProgress: progress.onProgress, onWarning: (m, f) => log.warn(m, f), onInfo: (m, f) => log.notice(m, f), signal: signals.signal, onRemoved: removalLogger(log, options.out), processes: localProcesses, collect: fullCollection() });
    progress.end();
    if (!options.quiet) {
      if (log.format === 'json') log.info('build complete', { event: 'done', out: options.out, features: report.features, tiles: { total: report.tiles.total, bytes: report.tiles.bytes }, timings: report.timings });
      else io.stdout.write(`${summaryLines(report, options.out).join('\n')}\n`);
    } else {
      warnLost(report.features, io, log);
    }
    return EXIT_OK;
  } catch (e) {
    progress.end();
    const code = signalExitCode(signals.received());
    if (e instanceof InterruptedError && code !== undefined) {
      const next = e.resumable ? 'run again with --resume to continue' : 'it stopped while reading its input, before anything was kept: run the build again';
      // One archive's name appears only when it is whole; a directory is whole once it has its descriptor.
      const left = isArchiveFile(options.out) ? `${options.out} not written` : 'no descriptor written';
      log.error(`build interrupted by ${signals.received()}: ${left}; ${next}`, { exitCode: code });
      return code;
    }
    throw e;
  } finally {
    signals.dispose();
  }
}
