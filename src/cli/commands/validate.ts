// `mudm-tiles validate FILE...`: streams each file through the validators and reports issues, capped samples and counts.
import { fileSource, parseFeature, readEventBatches, ReadError, streamSource, type Source } from '../../io/read.js';
import { InputError, UsageError } from '../../report/errors.js';
import { CollectionValidator, validateDocument, type Issue, type Severity } from '../../validate/index.js';
import type { CommandContext } from '../command.js';
import { EXIT_INVALID, EXIT_OK, EXIT_UNREADABLE } from '../exit.js';
import type { TextSink } from '../io.js';

export const usage = 'FILE...';

/** Samples kept (and printed) per rule code and file; the rest are only counted, so memory and output stay bounded. */
export const SAMPLES_PER_CODE = 20;

/** How the name of standard input appears in messages. */
const STDIN_NAME = 'stdin';

export interface IssueSample {
  /** Index of the feature in its file (from 0), or null for collection-level and document issues. */
  feature: number | null;
  /** Where the feature (or document) starts in the file; null for collection members. */
  line: number | null;
  column: number | null;
  /** JSON Pointer, relative to the feature for feature issues, else to the document. */
  path: string;
  message: string;
  code: string;
  severity: Severity;
}

export interface FileReport {
  file: string;
  /** What the file held; null when it could not be read. */
  kind: 'collection' | 'sequence' | 'document' | 'descriptor' | null;
  /** The top-level `type` (FeatureCollection, Feature, a geometry type) when there is one. */
  type: string | null;
  valid: boolean;
  features: number;
  invalidFeatures: number;
  errors: number;
  warnings: number;
  /** Issues by rule code, all of them, including those beyond the samples. */
  counts: Record<string, number>;
  samples: IssueSample[];
  unreadable?: { message: string; line: number; column: number };
}

export interface ValidateReport {
  files: FileReport[];
  total: {
    files: number;
    features: number;
    invalidFeatures: number;
    errors: number;
    warnings: number;
    invalidFiles: number;
    unreadableFiles: number;
  };
  exitCode: number;
}

export async function run(ctx: CommandContext): Promise<number> {
  const { args, options, io, log } = ctx;
  if (args.length === 0) throw new UsageError('validate needs at least one FILE (or - for standard input)');
  if (args.filter((a) => a === '-').length > 1) throw new UsageError('- (standard input) can be given only once');
  const text = !options.json;
  const quiet = options.quiet;
  const progress = makeProgress(options.progress, io.stderr);
  const files: FileReport[] = [];
  for (const arg of args) {
    const source = arg === '-' ? streamSource(STDIN_NAME, io.stdin) : fileSource(arg);
    const report = await validateSource(source, {
      onSample: text
        ? (s) => {
            if (!quiet || s.severity === 'error') io.stdout.write(`${sampleLine(source.name, s)}\n`);
          }
        : undefined,
      onProgress: progress,
    });
    progress.end();
    if (report.unreadable) {
      const u = report.unreadable;
      log.error(`${u.line > 0 ? `${report.file}:${u.line}:${u.column}` : report.file}: ${u.message}`, { file: report.file, ...u });
    }
    if (text) {
      for (const [code, n] of Object.entries(report.counts)) {
        const shown = report.samples.filter((s) => s.code === code);
        const more = n - shown.length;
        if (more > 0 && !(quiet && shown[0]?.severity !== 'error')) io.stdout.write(`${report.file}: … and ${more} more [${code}]\n`);
      }
      if (!quiet) io.stdout.write(`${fileSummary(report)}\n`);
    }
    files.push(report);
  }
  const total = {
    files: files.length,
    features: sum(files, (f) => f.features),
    invalidFeatures: sum(files, (f) => f.invalidFeatures),
    errors: sum(files, (f) => f.errors),
    warnings: sum(files, (f) => f.warnings),
    invalidFiles: files.filter((f) => !f.valid && !f.unreadable).length,
    unreadableFiles: files.filter((f) => f.unreadable).length,
  };
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
 * Validates one source, one feature at a time. Syntax and I/O errors end the file and land in `unreadable`; any
 * other exception is a bug and propagates.
 */
export async function validateSource(
  source: Source,
  hooks: { onSample?: (s: IssueSample) => void; onProgress?: (file: string, features: number) => void } = {},
): Promise<FileReport> {
  const report: FileReport = {
    file: source.name,
    kind: null,
    type: null,
    valid: true,
    features: 0,
    invalidFeatures: 0,
    errors: 0,
    warnings: 0,
    counts: {},
    samples: [],
  };
  const kept: Record<string, number> = {};
  const record = (issue: Issue, feature: number | null, line: number | null, column: number | null, path: string): void => {
    report.counts[issue.code] = (report.counts[issue.code] ?? 0) + 1;
    if (issue.severity === 'error') report.errors++;
    else report.warnings++;
    if ((kept[issue.code] ?? 0) >= SAMPLES_PER_CODE) return;
    kept[issue.code] = (kept[issue.code] ?? 0) + 1;
    const sample: IssueSample = { feature, line, column, path, message: issue.message, code: issue.code, severity: issue.severity };
    report.samples.push(sample);
    hooks.onSample?.(sample);
  };

  const validator = new CollectionValidator();
  // One array reused for every feature: the validator appends to it, saving an allocation per feature.
  const scratch: Issue[] = [];
  let sawMembers = false;
  try {
    for await (const events of readEventBatches(source)) {
      for (const ev of events) {
        if (ev.kind === 'feature') {
          const value = parseFeature(ev);
          scratch.length = 0;
          validator.feature(value, ev.index, scratch);
          report.features++;
          if (scratch.length > 0) {
            const prefix = `/features/${ev.index}`;
            let invalid = false;
            for (const issue of scratch) {
              if (issue.severity === 'error') invalid = true;
              record(issue, ev.index, ev.line, ev.column, relativeTo(issue.path, prefix));
            }
            if (invalid) report.invalidFeatures++;
          }
          if ((report.features & 4095) === 0) hooks.onProgress?.(source.name, report.features);
        } else if (ev.kind === 'members') {
          sawMembers = true;
          const members = ev.members;
          if (typeof members.type === 'string') report.type = members.type;
          // A descriptor whose `features` member came before `tilejson` was streamed; its members are still a descriptor.
          const issues = 'tilejson' in members ? validateDocument(members) : validator.end(members);
          for (const issue of issues) record(issue, null, null, null, issue.path);
        } else {
          const value = ev.value;
          const isObject = value !== null && typeof value === 'object' && !Array.isArray(value);
          report.kind = isObject && 'tilejson' in value ? 'descriptor' : 'document';
          const type = isObject ? (value as { type?: unknown }).type : undefined;
          if (typeof type === 'string') report.type = type;
          const issues = validateDocument(value);
          for (const issue of issues) record(issue, null, ev.line, ev.column, issue.path);
          if (type === 'Feature') {
            report.features = 1;
            if (issues.some((i) => i.severity === 'error')) report.invalidFeatures = 1;
          }
        }
      }
    }
    if (report.kind === null) report.kind = sawMembers ? 'collection' : 'sequence';
  } catch (e) {
    if (!(e instanceof ReadError || e instanceof InputError)) throw e;
    report.unreadable = { message: e.message, line: e.line ?? 0, column: e.column ?? 0 };
  }
  report.valid = report.errors === 0 && !report.unreadable;
  return report;
}

/** The issue path below the feature (`/features/3/geometry` → `/geometry`); other paths unchanged. */
function relativeTo(path: string, prefix: string): string {
  if (path === prefix) return '';
  return path.startsWith(prefix) && path[prefix.length] === '/' ? path.slice(prefix.length) : path;
}

/** `file:feature N: /pointer: message [code]`, or `file: /pointer: message [code]` outside features. */
export function sampleLine(file: string, s: IssueSample): string {
  const where = s.feature === null ? file : `${file}:feature ${s.feature}`;
  const severity = s.severity === 'warning' ? 'warning: ' : '';
  return `${where}: ${s.path || '/'}: ${severity}${s.message} [${s.code}]`;
}

function fileSummary(r: FileReport): string {
  if (r.unreadable) {
    const u = r.unreadable;
    return `${r.file}: unreadable${u.line > 0 ? ` at line ${u.line}, column ${u.column}` : ''}: ${u.message}`;
  }
  // A lone geometry or descriptor has no features to count: name what it is instead.
  const bare = r.kind === 'descriptor' || (r.kind === 'document' && r.type !== 'Feature' && r.type !== 'FeatureCollection');
  const what = r.kind === 'descriptor' ? 'tileset descriptor'
    : bare ? (r.type ?? 'document')
    : `${plural(r.features, 'feature')} (${r.invalidFeatures} invalid)`;
  return `${r.file}: ${r.valid ? 'valid' : 'invalid'}, ${what}, ${plural(r.errors, 'error')}, ${plural(r.warnings, 'warning')}`;
}

function plural(n: number, word: string): string {
  return `${n.toLocaleString('en-US')} ${word}${n === 1 ? '' : 's'}`;
}

function sum<T>(items: readonly T[], f: (t: T) => number): number {
  return items.reduce((n, t) => n + f(t), 0);
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
