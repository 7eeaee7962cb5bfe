// The in-memory twin of the work directory (workdir.ts), for tests and library callers without a disk.
import { ByteArena } from '../bytes.js';
import { WorkStateError } from '../report/errors.js';
import { claimedMessage, type WorkDir } from './workdir.js';

/** In-memory twin: the same contract without touching the disk. */
export class MemoryWorkDir implements WorkDir {
  readonly root = undefined;
  private readonly files = new Map<string, string | Uint8Array>();
  /** Files grown by append, each in a buffer that doubles as it fills. */
  private readonly grown = new Map<string, ByteArena>();
  writeJson(rel: string, value: unknown): void { this.grown.delete(rel); this.files.set(rel, JSON.stringify(value)); }
  readJson<T>(rel: string): T | undefined {
    const s = this.files.get(rel);
    return typeof s === 'string' ? (JSON.parse(s) as T) : undefined;
  }
  writeBytes(rel: string, parts: readonly Uint8Array[]): void {
    this.grown.delete(rel);
    this.files.set(rel, Buffer.concat(parts));
  }
  append(rel: string, parts: readonly Uint8Array[]): void {
    let arena = this.grown.get(rel);
    if (arena === undefined) {
      const old = this.files.get(rel);
      this.grown.set(rel, (arena = new ByteArena(1024)));
      if (old instanceof Uint8Array) arena.addBytes(old);
    }
    for (const p of parts) arena.addBytes(p);
    this.files.set(rel, arena.buf.subarray(0, arena.pos));
  }
  readRange(rel: string, offset: number, length: number): Uint8Array | undefined {
    const b = this.files.get(rel);
    return b instanceof Uint8Array && offset + length <= b.byteLength ? b.slice(offset, offset + length) : undefined;
  }
  readBytes(rel: string): Uint8Array | undefined {
    const b = this.files.get(rel);
    // A copy, as a file read gives: what the caller moves to another thread must not empty the stored bytes.
    return b instanceof Uint8Array ? new Uint8Array(b) : undefined;
  }
  exists(rel: string): boolean { return this.files.has(rel) || this.list(rel).length > 0; }
  list(rel: string): string[] {
    const prefix = `${rel}/`;
    const names = new Set<string>();
    for (const k of this.files.keys()) if (k.startsWith(prefix)) names.add(k.slice(prefix.length).split('/')[0]);
    return [...names].sort();
  }
  close(): void {}
  removeFolder(rel: string): void {
    for (const k of [...this.files.keys()]) if (k === rel || k.startsWith(`${rel}/`)) { this.files.delete(k); this.grown.delete(k); }
  }
  destroy(): void { this.files.clear(); this.grown.clear(); }
  size(rel: string): number | undefined {
    const f = this.files.get(rel);
    return f === undefined ? undefined : typeof f === 'string' ? Buffer.byteLength(f) : f.byteLength;
  }
  /** In memory, only a build puts anything there. */
  foreign(): undefined { return undefined; }
  abandoned(): boolean { return false; }
  retire(): void { this.destroy(); }
  /** In memory, nothing is left aside. */
  sweep(): void {}
  claim(): void {
    if (this.files.size > 0) throw new WorkStateError(claimedMessage('the work directory'));
  }
  own(): void {}
  release(): void {}
  /** In memory, the directory is this process's own. */
  liveOwner(): undefined { return undefined; }
  claimOwner(): undefined { return undefined; }
}
