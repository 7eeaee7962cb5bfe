// Partition stage: work-unit records grouped by key, held in memory below a budget and spilled to files above it.
import fs from 'node:fs';
import path from 'node:path';

/**
 * Records of work units. Appends arrive in a fixed order (input order), so a unit's records are in sequence order.
 * A spilled unit is handed to a worker as a file path; an in-memory one as bytes.
 */
export interface UnitStore {
  append(key: string, text: string): void;
  /** Keys in sorted order. */
  keys(): string[];
  /** Where a unit's records are: a file to read, or the text itself, which then leaves the store. */
  take(key: string): { path: string } | { text: string };
  /** Like take, but the records stay (another unit reads them too). */
  peek(key: string): { path: string } | { text: string };
  close(): void;
}

/** File name of a unit key (keys hold `/` and digits only). */
export function unitFileName(key: string): string {
  return `${key.replace(/\//g, '_')}.rec`;
}

/**
 * Keeps records in memory until they pass `budget` bytes, then moves everything to `dir` and appends there.
 * The switch happens once: mixing would make the reading side depend on timing.
 */
export class SpillingStore implements UnitStore {
  private mem = new Map<string, string[]>();
  private sizes = new Map<string, number>();
  private bytes = 0;
  private spilled = false;
  private readonly known = new Set<string>();

  /**
   * `fresh` starts from nothing (records an interrupted run left would otherwise be appended to); `existing` reads the
   * unit files another process planned, never appending to or removing them.
   */
  constructor(private readonly dir: string, private readonly budget: number, private readonly mode: 'fresh' | 'existing' = 'fresh') {
    if (mode === 'existing') {
      this.spilled = true;
      for (const f of fs.existsSync(dir) ? fs.readdirSync(dir) : []) if (f.endsWith('.rec')) this.known.add(f.slice(0, -4).replace(/_/g, '/'));
      return;
    }
    fs.rmSync(dir, { recursive: true, force: true });
    if (budget <= 0) this.spill();
  }

  get isSpilled(): boolean { return this.spilled; }

  append(key: string, text: string): void {
    this.known.add(key);
    if (this.spilled) {
      fs.appendFileSync(path.join(this.dir, unitFileName(key)), text);
      return;
    }
    const list = this.mem.get(key);
    if (list) list.push(text); else this.mem.set(key, [text]);
    this.sizes.set(key, (this.sizes.get(key) ?? 0) + text.length);
    this.bytes += text.length * 2;
    if (this.bytes > this.budget) this.spill();
  }

  /** Moves every in-memory unit to its file. */
  spill(): void {
    if (this.spilled) return;
    fs.mkdirSync(this.dir, { recursive: true });
    for (const [key, list] of this.mem) fs.appendFileSync(path.join(this.dir, unitFileName(key)), list.join(''));
    this.mem.clear();
    this.sizes.clear();
    this.bytes = 0;
    this.spilled = true;
  }

  keys(): string[] {
    return [...this.known].sort(compareKeys);
  }

  take(key: string): { path: string } | { text: string } {
    if (this.spilled) return { path: path.join(this.dir, unitFileName(key)) };
    const list = this.mem.get(key) ?? [];
    this.mem.delete(key);
    this.bytes -= (this.sizes.get(key) ?? 0) * 2;
    this.sizes.delete(key);
    return { text: list.join('') };
  }

  peek(key: string): { path: string } | { text: string } {
    if (this.spilled) return { path: path.join(this.dir, unitFileName(key)) };
    return { text: (this.mem.get(key) ?? []).join('') };
  }

  close(): void {
    this.mem.clear();
    if (this.mode === 'fresh') fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Orders keys of `/`-separated integers numerically, part by part. */
export function compareKeys(a: string, b: string): number {
  const pa = a.split('/'), pb = b.split('/');
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    const d = Number(pa[i]) - Number(pb[i]);
    if (d !== 0) return d;
  }
  return pa.length - pb.length;
}

/**
 * Adds one feature's records to every cell (of side `cell` pixels, indexes 0..last) its bbox plus `pad` meets; the
 * cell holding the bbox centre is its home, where it is counted once. The layer and JSON are formatted once, not per cell.
 */
export function routeRecord(
  out: Map<string, string[]>, prefix: string, seq: number, layer: string, featureJson: string,
  b: ArrayLike<number>, cell: number, pad: number, last = Infinity,
): void {
  const tail = `\t${JSON.stringify(layer)}\t${featureJson.length}\n${featureJson}\n`;
  const hx = Math.min(last, Math.max(0, Math.floor((b[0] + b[3]) / 2 / cell))), hy = Math.min(last, Math.max(0, Math.floor((b[1] + b[4]) / 2 / cell)));
  const x0 = Math.max(0, Math.floor((b[0] - pad) / cell)), x1 = Math.min(last, Math.floor((b[3] + pad) / cell));
  const y0 = Math.max(0, Math.floor((b[1] - pad) / cell)), y1 = Math.min(last, Math.floor((b[4] + pad) / cell));
  for (let cy = y0; cy <= y1; cy++) {
    for (let cx = x0; cx <= x1; cx++) {
      const key = `${prefix}${cx}/${cy}`;
      const rec = `${seq}\t${cx === hx && cy === hy ? 1 : 0}${tail}`;
      const list = out.get(key);
      if (list) list.push(rec); else out.set(key, [rec]);
    }
  }
}

export interface StoredRecord { seq: number; home: boolean; layer: string; json: string }

/** Reads records back from a unit's text, in stored order. */
export function* parseRecords(text: string): Generator<StoredRecord> {
  let i = 0;
  while (i < text.length) {
    const nl = text.indexOf('\n', i);
    if (nl < 0) break;
    const [seq, home, layer, len] = text.slice(i, nl).split('\t');
    const start = nl + 1, n = Number(len);
    yield { seq: Number(seq), home: home === '1', layer: JSON.parse(layer) as string, json: text.slice(start, start + n) };
    i = start + n + 1;
  }
}
