// What verify finds: problem codes, one problem, and the list that keeps the first few of each code and counts the rest.

export type ProblemCode =
  | 'descriptor-unusable' | 'descriptor-invalid' | 'descriptor-layout'
  | 'overview-missing' | 'overview-invalid'
  | 'report-missing' | 'report-mismatch'
  | 'zoom-outside-range' | 'zoom-missing' | 'bounds-mismatch' | 'stray-file'
  | 'tile-undecodable' | 'tile-invalid' | 'tile-empty' | 'tile-outside-grid' | 'tile-outside-bounds' | 'tile-over-budget'
  | 'feature-outside-tile' | 'unknown-layer' | 'pbf-layer' | 'pbf-winding'
  | 'format-mismatch' | 'feature-mismatch' | 'field-mismatch' | 'archive-invalid';

export interface Problem {
  code: ProblemCode;
  /** File the problem is in, relative to the pyramid root. */
  path: string;
  message: string;
}

/** A reader's message about the file at `file`, which a problem names by its path already: the file not said twice. */
export function withoutFile(message: string, file: string): string {
  return message.startsWith(`${file}: `) ? message.slice(file.length + 2) : message;
}

/** A problem found in the file at `path`. */
export function problem(code: ProblemCode, path: string, message: string): Problem {
  return { code, path, message };
}

/** Problems in the order found, at most `maxPerCode` kept per code; every one counted. */
export class ProblemList {
  readonly list: Problem[] = [];
  readonly counts: Partial<Record<ProblemCode, number>> = {};
  constructor(private readonly maxPerCode: number) {}

  add(found: readonly Problem[]): void {
    for (const x of found) {
      const n = (this.counts[x.code] ?? 0) + 1;
      this.counts[x.code] = n;
      if (n <= this.maxPerCode) this.list.push(x);
    }
  }
}

/** A file's bytes as JSON; throws on bad UTF-8 as on bad JSON. */
export function decodeJsonBytes(bytes: Uint8Array): unknown {
  return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
}

export function isAbsoluteUrl(u: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(u);
}
