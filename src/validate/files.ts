// Validating whole inputs: each source streamed through the validators, one feature at a time, into a file report
// (counts by rule, capped samples); `mudm-tiles validate` prints these.
import { parseFeature, readEventBatches, type Source } from '../io/read.js';
import type { FeatureEvent } from '../io/json-events.js';
import { ImageError, InputError, ReadError } from '../report/errors.js';
import type { FeatureSource, MadeOptions } from '../io/source.js';
import { arrayDocumentIssue, isBuildReportObject, isDescriptorObject, validateDocument } from './index.js';
import { CollectionValidator } from './feature.js';
import type { Issue } from './issue.js';
import { IssueTally, type IssueSample } from './tally.js';
import { checkMembersUtf8, checkRepeated, checkUtf8 } from './values.js';
import { repeatedName } from '../io/json-names.js';

export interface FileReport {
  file: string;
  /**
   * What the file held (`array`: a top-level array of features, which the build reads; `report`: a build's run report;
   * `mask`: a label mask, traced as a build traces it); null when it could not be read.
   */
  kind: 'collection' | 'sequence' | 'array' | 'document' | 'descriptor' | 'report' | 'mask' | null;
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
  /** Why the file cannot be read: the message without its place, which `line` and `column` give (0 for none). */
  unreadable?: { message: string; line: number; column: number };
  /** A label mask's features: its labels, or their pieces (`--mask-features piece`, or `auto` finding it numbered afresh). */
  maskFeatures?: 'label' | 'piece';
}

export interface ValidateTotals {
  files: number;
  features: number;
  invalidFeatures: number;
  errors: number;
  warnings: number;
  invalidFiles: number;
  unreadableFiles: number;
}

export interface ValidateHooks {
  /** Each sample as it is kept, so a command can print it at once. */
  onSample?: (s: IssueSample) => void;
  /** Every 4,096 features. */
  onProgress?: (file: string, features: number) => void;
}

/** A feature event parsed; a syntax error named by its feature, as the build names it (its JSON path is the feature's own). */
function featureOf(ev: FeatureEvent): unknown {
  try {
    return parseFeature(ev);
  } catch (e) {
    if (e instanceof ReadError) throw new ReadError(e.file, e.line, e.column, `feature ${ev.index}: ${e.reason}`, { cause: e });
    throw e;
  }
}

/**
 * Validates one source, one feature at a time. Syntax and I/O errors end the file and land in `unreadable`; any
 * other exception is a bug and propagates.
 */
export async function validateSource(source: Source, hooks: ValidateHooks = {}): Promise<FileReport> {
  const file = source.name;
  const tally = new IssueTally(undefined, hooks.onSample);
  const report: FileReport = { ...emptyReport(file), counts: tally.byCode, samples: tally.samples };
  const validator = new CollectionValidator();
  // One array reused for every feature: the validator appends to it, saving an allocation per feature.
  const scratch: Issue[] = [];
  let sawMembers = false;
  try {
    const reading = readEventBatches(source);
    for await (const events of reading) {
      for (const ev of events) {
        if (ev.kind === 'feature') {
          let value: unknown;
          try {
            value = featureOf(ev);
          } catch (e) {
            // Back to the reader, which says so if gzip data behind it is corrupt.
            await reading.throw(e);
            throw e;
          }
          scratch.length = 0;
          validator.feature(value, ev.index, scratch);
          // As the build reads it: bytes that are no UTF-8 (a Latin-1 export) become U+FFFD.
          checkUtf8(ev.text, ev.bytes, 0, ev.bytes.length, `/features/${ev.index}`, scratch, value);
          checkRepeated(repeatedName(ev.text, value, ev.strings), `/features/${ev.index}`, scratch);
          report.features++;
          if (scratch.length > 0) {
            const prefix = `/features/${ev.index}`;
            const place = { file, feature: ev.index, line: ev.line, column: ev.column };
            let invalid = false;
            for (const issue of scratch) {
              if (issue.severity === 'error') invalid = true;
              tally.add(issue, place, relativeTo(issue.path, prefix));
            }
            if (invalid) report.invalidFeatures++;
          }
          if ((report.features & 4095) === 0) hooks.onProgress?.(file, report.features);
        } else if (ev.kind === 'array') {
          report.kind = 'array';
          tally.add(arrayDocumentIssue(), { file, feature: null, line: ev.line, column: ev.column });
        } else if (ev.kind === 'members') {
          sawMembers = true;
          const members = ev.members;
          if (typeof members.type === 'string') report.type = members.type;
          // A descriptor whose `features` member came before `tilejson` was streamed; its members are still a descriptor.
          const issues = isDescriptorObject(members) ? validateDocument(members) : validator.end(members);
          checkMembersUtf8(ev.replaced, members, issues);
          checkRepeated(ev.repeated, '', issues);
          for (const issue of issues) tally.add(issue, { file, feature: null, line: null, column: null });
        } else {
          const value = ev.value;
          const isObject = value !== null && typeof value === 'object' && !Array.isArray(value);
          report.kind = !isObject ? 'document'
            : isBuildReportObject(value as Record<string, unknown>) ? 'report'
            : isDescriptorObject(value as Record<string, unknown>) ? 'descriptor' : 'document';
          const type = isObject ? (value as { type?: unknown }).type : undefined;
          if (typeof type === 'string') report.type = type;
          const issues = validateDocument(value);
          if (ev.replaced) checkUtf8(ev.replaced.text, ev.replaced.bytes, 0, ev.replaced.bytes.length, '', issues, value);
          checkRepeated(ev.repeated, '', issues);
          for (const issue of issues) tally.add(issue, { file, feature: null, line: ev.line, column: ev.column });
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
    report.unreadable = unreadableOf(e);
  }
  report.errors = tally.errors;
  report.warnings = tally.warnings;
  report.valid = report.errors === 0 && !report.unreadable;
  return report;
}

/**
 * A label mask traced as a build traces it (`maskSource`), its features counted: what the build refuses of it (a
 * negative or fractional label, a colour image, a lossy or 64-bit TIFF, an intensity image) makes it unreadable, with the build's reason. `made` is what the build
 * would be given (--mask-features), so that the count is that of the features it would make.
 */
export async function validateMask(source: FeatureSource, made?: MadeOptions): Promise<FileReport> {
  const report: FileReport = { ...emptyReport(source.name), kind: 'mask' };
  try {
    for await (const group of source.features(made)) report.features += group.length;
  } catch (e) {
    if (!(e instanceof ImageError)) throw e;
    return { ...report, kind: null, valid: false, unreadable: { message: e.reason, line: 0, column: 0 } };
  }
  return { ...report, maskFeatures: source.readAsPieces?.() ? 'piece' : 'label' };
}

/** The report of a file nothing was read from yet. */
function emptyReport(file: string): FileReport {
  return { file, kind: null, type: null, valid: true, features: 0, invalidFeatures: 0, errors: 0, warnings: 0, counts: {}, samples: [] };
}

/** Why a file cannot be read: the message without its place, which line and column give (0 for none). */
function unreadableOf(e: ReadError | InputError): NonNullable<FileReport['unreadable']> {
  return { message: e instanceof ReadError ? e.reason : e.message, line: e.line ?? 0, column: e.column ?? 0 };
}

/** The report of a file (or directory) that cannot be read at all, for `error`. */
export function unreadableReport(file: string, error: ReadError | InputError): FileReport {
  return { ...emptyReport(file), valid: false, unreadable: unreadableOf(error) };
}

/** Sums of the file reports. */
export function validateTotals(files: readonly FileReport[]): ValidateTotals {
  const sum = (f: (r: FileReport) => number) => files.reduce((n, r) => n + f(r), 0);
  return {
    files: files.length,
    features: sum((f) => f.features),
    invalidFeatures: sum((f) => f.invalidFeatures),
    errors: sum((f) => f.errors),
    warnings: sum((f) => f.warnings),
    invalidFiles: files.filter((f) => !f.valid && !f.unreadable).length,
    unreadableFiles: files.filter((f) => f.unreadable).length,
  };
}

/** The issue path below the feature (`/features/3/geometry` → `/geometry`); other paths unchanged. */
function relativeTo(path: string, prefix: string): string {
  if (path === prefix) return '';
  return path.startsWith(prefix) && path[prefix.length] === '/' ? path.slice(prefix.length) : path;
}
