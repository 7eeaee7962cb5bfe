// Issue tallies: counts by rule code and a bounded list of samples, the one way `validate`, the build's parse
// workers and its run report keep the issues they found.
import { shownPath, type Issue, type Severity } from './issue.js';
import { withCode } from '../report/coded.js';

/** Samples kept per rule code and file; the rest are only counted, so memory and output stay bounded. */
export const SAMPLES_PER_CODE = 20;

/** One issue as reports show it: where it was found, and what. */
export interface IssueSample {
  file: string;
  /** Index of the feature in its file (from 0), or null for collection-level (line null too) and document issues. */
  feature: number | null;
  /** Where the feature (or document) starts in the file; null when it has no place in the text (collection members, traced masks). */
  line: number | null;
  column: number | null;
  /** JSON Pointer, relative to the feature for feature issues, else to the document. */
  path: string;
  message: string;
  code: string;
  severity: Severity;
}

/** Where an issue was found (the sample's place). */
export type IssuePlace = Pick<IssueSample, 'file' | 'feature' | 'line' | 'column'>;

/** Where the first feature not placed for a reason is, and, where it lies beyond the world or image, its box. */
export type SkippedPlace = IssuePlace & { box?: number[] };

/** What a tally holds, as plain data: it crosses threads (a parse worker's tally) and goes into reports. */
export interface IssueCounts {
  errorsByCode: Record<string, number>;
  warningsByCode: Record<string, number>;
  samples: IssueSample[];
}

/** Counts every issue by code and severity and keeps the first `cap` samples of each code in each file. */
export class IssueTally implements IssueCounts {
  readonly errorsByCode: Record<string, number> = {};
  readonly warningsByCode: Record<string, number> = {};
  /** Every code, in the order codes were first seen. */
  readonly byCode: Record<string, number> = {};
  readonly samples: IssueSample[] = [];
  errors = 0;
  warnings = 0;
  private readonly kept = new Map<string, number>();

  /** `onSample` sees each sample as it is kept (a command prints it at once). */
  constructor(private readonly cap = SAMPLES_PER_CODE, private readonly onSample?: (s: IssueSample) => void) {}

  /** Counts an issue; `path` replaces the issue's own (a pointer made relative to its feature). */
  add(issue: Issue, place: IssuePlace, path = issue.path): void {
    this.count(issue.code, issue.severity, 1);
    this.keep({ ...place, path, message: issue.message, code: issue.code, severity: issue.severity });
  }

  /** Adds what another tally counted (a worker's, for one batch); its samples pass this tally's cap in their order. */
  merge(other: IssueCounts): void {
    for (const [code, n] of Object.entries(other.errorsByCode)) this.count(code, 'error', n);
    for (const [code, n] of Object.entries(other.warningsByCode)) this.count(code, 'warning', n);
    for (const s of other.samples) this.keep(s);
  }

  /** The plain data, for a worker's result. */
  counts(): IssueCounts {
    return { errorsByCode: this.errorsByCode, warningsByCode: this.warningsByCode, samples: this.samples };
  }

  private count(code: string, severity: Severity, n: number): void {
    const into = severity === 'error' ? this.errorsByCode : this.warningsByCode;
    into[code] = (into[code] ?? 0) + n;
    this.byCode[code] = (this.byCode[code] ?? 0) + n;
    if (severity === 'error') this.errors += n;
    else this.warnings += n;
  }

  private keep(s: IssueSample): void {
    const key = `${s.file}\0${s.code}`;
    const n = (this.kept.get(key) ?? 0) + 1;
    this.kept.set(key, n);
    if (n > this.cap) return;
    this.samples.push(s);
    this.onSample?.(s);
  }
}

/** `file:feature N: /pointer: message [code]`, `file:collection: ...` for a collection's members, `file: ...` for a document. */
export function sampleLine(s: IssueSample): string {
  const severity = s.severity === 'warning' ? 'warning: ' : '';
  return withCode(`${placeText(s)}: ${shownPath(s.path)}: ${severity}${s.message}`, s.code);
}

/**
 * Where a feature not placed is, and where it lies (`x -500 to -490, y -500 to -490`): a crop's offset or another
 * image's coordinates show there, where its place alone left every feature to search.
 */
export function skippedText(s: SkippedPlace): string {
  const n = (v: number) => v.toLocaleString('en-US', { maximumFractionDigits: 2 });
  const b = s.box;
  return placeText(s) + (b && b.length === 4 ? `, lying at x ${n(b[0])} to ${n(b[2])}, y ${n(b[1])} to ${n(b[3])}` : '');
}

/** Where an issue or a feature is, as a sample line starts. */
export function placeText(s: IssuePlace): string {
  // A collection's own members have no place in the text (line null); a whole document has its line. A feature's
  // line and column come first, as editors and compilers give a place (file:line:column), so a click opens it there.
  const at = s.line !== null ? `${s.file}:${s.line}:${s.column ?? 1}` : s.file;
  return s.feature !== null ? `${at}: feature ${s.feature}` : s.line === null ? `${s.file}:collection` : s.file;
}
