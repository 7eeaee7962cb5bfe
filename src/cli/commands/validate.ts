// `mudm-tiles validate INPUT...`: validates each file (src/validate/files.ts) and prints issues, capped samples and counts.
import fs from 'node:fs';
import path from 'node:path';
import { fileSource, stdinSource } from '../../io/read.js';
import { MASK_FILE, maskSource } from '../../io/mask-source.js';
import { InputError, UsageError } from '../../report/errors.js';
import { unreadableReport, validateMask, validateSource, validateTotals, type FileReport, type ValidateTotals } from '../../validate/files.js';
import { sampleLine } from '../../validate/tally.js';
import type { MaskFeatures } from '../../options.js';
import type { CommandContext } from '../command.js';
import { EXIT_INVALID, EXIT_OK, EXIT_UNREADABLE } from '../exit.js';
import { dataFilesIn } from '../inputs.js';
import type { CliIO, TextSink } from '../io.js';
import type { Logger } from '../log.js';
import { withCode } from '../../report/coded.js';

export const usage = 'FILE|DIR...';

/** What --json prints. */
export interface ValidateReport {
  files: FileReport[];
  total: ValidateTotals;
  exitCode: number;
}

export async function run(ctx: CommandContext): Promise<number> {
  const { args, options, io, log } = ctx;
  if (args.length === 0) throw new UsageError('validate needs at least one FILE or DIR (or - for standard input)');
  if (args.filter((a) => a === '-').length > 1) throw new UsageError('- (standard input) can be given only once');
  const text = !options.json;
  const quiet = options.quiet;
  const progress = makeProgress(options.progress, io.stderr);
  const files: FileReport[] = [];
  /** One file's report: an image is a label mask, traced as the build would (read as JSON it said "unexpected byte 0x89"). */
  const check = async (arg: string): Promise<FileReport> => {
    if (MASK_FILE.test(arg)) return validateMask(maskSource(arg), { maskFeatures: options.maskFeatures as MaskFeatures });
    const source = arg === '-' ? stdinSource(io.stdin) : fileSource(arg, { reuseChunks: true });
    const report = await validateSource(source, {
      onSample: text
        ? (s) => {
            if (!quiet || s.severity === 'error') io.stdout.write(`${sampleLine(s)}\n`);
          }
        : undefined,
      onProgress: progress,
    });
    progress.end();
    return report;
  };
  for (const arg of args) {
    for (const item of filesOf(arg, io, log)) {
      const report = typeof item === 'string' ? await check(item) : item;
      if (report.unreadable) {
        const u = report.unreadable;
        log.error(`${u.line > 0 ? `${report.file}:${u.line}:${u.column}` : report.file}: ${u.message}`, { file: report.file, ...u });
      }
      if (text) {
        for (const [code, n] of Object.entries(report.counts)) {
          const shown = report.samples.filter((s) => s.code === code);
          const more = n - shown.length;
          if (more > 0 && !(quiet && shown[0]?.severity !== 'error')) io.stdout.write(`${withCode(`${report.file}: … and ${more} more`, code)}\n`);
        }
        if (!quiet) io.stdout.write(`${fileSummary(report)}\n`);
      }
      files.push(report);
    }
  }
  const total = validateTotals(files);
  const exitCode = total.unreadableFiles > 0 ? EXIT_UNREADABLE : total.invalidFiles > 0 ? EXIT_INVALID : EXIT_OK;
  if (text && !quiet) {
    io.stdout.write(
      `total: ${plural(total.files, 'file')} (${total.invalidFiles} invalid, ${total.unreadableFiles} unreadable), ` +
        `${plural(total.features, 'feature')}, ${plural(total.errors, 'error')}, ${plural(total.warnings, 'warning')}, ` +
        `${plural(total.invalidFeatures, 'invalid feature')}\n`,
    );
  }
  if (!text) {
    const report: ValidateReport = { files, total, exitCode };
    io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  }
  return exitCode;
}

/**
 * What one argument gives to validate: itself, or the data files of a directory as build reads them (in name order,
 * images and hidden files passed over with a warning); a directory that holds none is reported as unreadable.
 */
function filesOf(arg: string, io: CliIO, log: Logger): (string | FileReport)[] {
  const full = path.resolve(io.cwd, arg);
  if (arg === '-' || fs.statSync(full, { throwIfNoEntry: false })?.isDirectory() !== true) return [arg];
  try {
    return dataFilesIn(arg, full, (m, f) => log.warn(m, f)).map((n) => path.join(arg, n));
  } catch (e) {
    if (!(e instanceof InputError)) throw e;
    return [unreadableReport(arg, e)];
  }
}

function fileSummary(r: FileReport): string {
  if (r.unreadable) {
    const u = r.unreadable;
    return `${r.file}: unreadable${u.line > 0 ? ` at line ${u.line}, column ${u.column}` : ''}: ${u.message}`;
  }
  // A lone geometry or descriptor has no features to count: name what it is instead.
  const bare = r.kind === 'descriptor' || r.kind === 'report' || (r.kind === 'document' && r.type !== 'Feature' && r.type !== 'FeatureCollection');
  const what = r.kind === 'descriptor' ? 'tileset descriptor'
    : r.kind === 'report' ? 'build report'
    : r.kind === 'mask' ? `label mask of ${plural(r.features, r.maskFeatures ?? 'label')}`
    : bare ? (r.type ?? 'document')
    : `${plural(r.features, 'feature')} (${r.invalidFeatures} invalid)`;
  return `${r.file}: ${r.valid ? 'valid' : 'invalid'}, ${what}, ${plural(r.errors, 'error')}, ${plural(r.warnings, 'warning')}`;
}

function plural(n: number, word: string): string {
  return `${n.toLocaleString('en-US')} ${word}${n === 1 ? '' : 's'}`;
}

interface Progress {
  (file: string, features: number): void;
  end(): void;
}

/** A status line on a terminal, or JSON lines, at most a few times a second; nothing when not asked for. */
function makeProgress(mode: string, stderr: TextSink): Progress {
  const style = mode === 'auto' ? (stderr.isTTY ? 'tty' : 'none') : mode;
  let last = 0;
  let drawn = false;
  const start = Date.now();
  const progress = ((file: string, features: number) => {
    if (style === 'none') return;
    const now = Date.now();
    if (now - last < (style === 'tty' ? 250 : 1000)) return;
    last = now;
    const elapsed = (now - start) / 1000;
    if (style === 'tty') {
      stderr.write(`\r\x1b[Kvalidating ${file}: ${features.toLocaleString('en-US')} features, ${Math.round(features / Math.max(elapsed, 1e-3)).toLocaleString('en-US')}/s`);
      drawn = true;
    } else {
      stderr.write(`${JSON.stringify({ event: 'progress', phase: 'validate', file, features, elapsed })}\n`);
    }
  }) as Progress;
  progress.end = () => {
    if (drawn) stderr.write('\r\x1b[K');
    drawn = false;
  };
  return progress;
}
