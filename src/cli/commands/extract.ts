// `mudm-tiles extract FILE.pmtiles|DIR -o OUT`: a build's archives written out as the spec's directory layout.
import { ExtractInterrupted, extractArchives } from '../../inspect/extract.js';
import { InterruptedError, UsageError } from '../../report/errors.js';
import type { CommandContext } from '../command.js';
import { EXIT_OK } from '../exit.js';
import { handleSignals, removalLogger, signalExitCode } from '../run-build.js';

export const usage = 'FILE.pmtiles|DIR -o OUT';

export const details =
  'Writes every tile of the archives at its path under OUT ({zlvl}/{t}/{c}/{z}/{x}/{y}.pbf|json), the build report and ' +
  'previews beside them, and tileset.json last without the archive assets: byte for byte what a directory build of the ' +
  'same input and options writes (the report aside, whose timings differ). DIR is the output of --archive pmtiles. ' +
  'A non-empty OUT is refused without --force.';

export async function run(ctx: CommandContext): Promise<number> {
  const { args, options, io, log } = ctx;
  if (args.length !== 1) throw new UsageError(`extract takes one archive (or directory of archives), found ${args.length} arguments`);
  if (!options.out) throw new UsageError('extract needs an output directory: -o DIR');
  const out = options.out;
  // Stopped, it removes what it wrote (as on a damaged tile) rather than leave a tree of tiles without its descriptor.
  const signals = handleSignals(log, `what extract wrote is removed`);
  let result;
  try {
    result = await extractArchives(args[0], out, { force: options.force, signal: signals.signal });
  } catch (e) {
    const code = signalExitCode(signals.received());
    if (!(e instanceof InterruptedError) || code === undefined) throw e;
    const earlier = e instanceof ExtractInterrupted && e.earlierFiles > 0 ? ` (--force had removed the earlier output's ${e.earlierFiles} files)` : '';
    log.error(`extract interrupted by ${signals.received()}: what it wrote in ${out} is removed${earlier}; run it again`, { exitCode: code });
    return code;
  } finally {
    signals.dispose();
  }
  const { removed, ...r } = result;
  if (removed) removalLogger(log, out)(removed);
  const line = `${args[0]}: ${r.tiles} tiles, ${r.files} files (${r.bytes} bytes) written to ${out}`;
  if (options.quiet) return EXIT_OK;
  if (log.format === 'json') log.info(line, { event: 'extracted', out, ...r });
  else io.stdout.write(`${line}\n`);
  return EXIT_OK;
}
