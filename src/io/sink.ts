// Tile sinks: where a build's files go. A directory (tiles written in place by the workers, other files through a temporary name) or memory.
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { OutputError, describeFsError } from '../report/errors.js';

export interface TileSink {
  /** Checks that the output may be written (refusing a non-empty one without force); changes nothing that is there. */
  initialize(opts: { force: boolean; resume: boolean }): Promise<void>;
  /** Called once tiles are about to be written: removes what marks a previous build complete (and, with force, its tiles). */
  begin(opts: { force: boolean; resume: boolean }): Promise<void>;
  /**
   * A directory that tile files may be written into directly, by any thread, under their final names (see
   * io/tile-files.ts: the unit markers and the descriptor, written last, cover a crash). Absent: tiles go through `write`.
   */
  readonly tileDirectory?: string;
  /** Writes one file atomically: a reader never sees a partial file under the final name. */
  write(relPath: string, bytes: Uint8Array | string): Promise<void>;
  /** Reads a file back, or undefined when it does not exist. */
  read(relPath: string): Promise<Uint8Array | undefined>;
  remove(relPath: string): Promise<void>;
  /** Makes every write so far survive the process being killed; a sink that buffers needs it before work is marked done. */
  flush?(): Promise<void>;
  finish(): Promise<void>;
}

/** Files a previous build leaves that mark it complete; removed first so a failed rebuild never looks complete. */
export const COMPLETION_FILES = ['tileset.json', 'build-report.json'];

export class DirectorySink implements TileSink {
  private readonly dirs = new Set<string>();
  private tmpCounter = 0;
  /** Distinguishes this writer's temporary files from another process writing the same pyramid (a retried shard). */
  private readonly tag = randomBytes(4).toString('hex');

  constructor(readonly root: string) {}

  get tileDirectory(): string {
    return this.root;
  }

  async initialize({ force, resume }: { force: boolean; resume: boolean }): Promise<void> {
    let entries: string[] = [];
    try {
      const st = fs.statSync(this.root);
      if (!st.isDirectory()) throw new OutputError(`output ${this.root} is a file, not a directory`, this.root);
      entries = fs.readdirSync(this.root);
    } catch (err) {
      if (err instanceof OutputError) throw err;
      if ((err as { code?: string }).code !== 'ENOENT') throw describeFsError(err, this.root);
    }
    const visible = entries.filter((e) => e !== '.mudm-work');
    if (visible.length > 0 && !force && !resume) {
      throw new OutputError(`output ${this.root} is not empty (${visible.length} entries); use --force to replace it`, this.root);
    }
    try {
      fs.mkdirSync(this.root, { recursive: true });
      this.probe();
    } catch (err) {
      throw err instanceof OutputError ? err : describeFsError(err, this.root);
    }
  }

  async begin({ force, resume }: { force: boolean; resume: boolean }): Promise<void> {
    try {
      for (const f of COMPLETION_FILES) fs.rmSync(path.join(this.root, f), { force: true });
      const zoomDirs = fs.readdirSync(this.root).filter((e) => /^\d+$/.test(e)).map((e) => path.join(this.root, e));
      // Old tiles would mix with new ones: the zoom directories go, other files the user put there stay.
      if (force && !resume) for (const d of zoomDirs) fs.rmSync(d, { recursive: true, force: true });
      // A build killed while writing leaves a temporary file beside the tile it was writing.
      if (resume) for (const d of zoomDirs) removeTemporaries(d);
    } catch (err) {
      throw describeFsError(err, this.root);
    }
  }

  /** Fails early, with the path, when the directory cannot be written. */
  private probe(): void {
    const p = path.join(this.root, `.probe-${this.tag}`);
    fs.writeFileSync(p, '');
    fs.rmSync(p);
  }

  async write(relPath: string, bytes: Uint8Array | string): Promise<void> {
    const full = path.join(this.root, relPath);
    const dir = path.dirname(full);
    const tmp = `${full}.tmp-${this.tag}-${this.tmpCounter++}`; // as TEMPORARY matches
    try {
      if (!this.dirs.has(dir)) {
        fs.mkdirSync(dir, { recursive: true });
        this.dirs.add(dir);
      }
      // Synchronous writes measured fastest for many small files on 2 cores (stack.md); the main thread is idle here.
      fs.writeFileSync(tmp, bytes);
      fs.renameSync(tmp, full);
    } catch (err) {
      fs.rmSync(tmp, { force: true });
      throw describeFsError(err, full);
    }
  }

  async read(relPath: string): Promise<Uint8Array | undefined> {
    try {
      return fs.readFileSync(path.join(this.root, relPath));
    } catch {
      return undefined;
    }
  }

  async remove(relPath: string): Promise<void> {
    fs.rmSync(path.join(this.root, relPath), { force: true, recursive: true });
  }

  async finish(): Promise<void> {}
}

/** Names of the temporary files of `DirectorySink.write`: `NAME.tmp-TAG-N`. */
const TEMPORARY = /\.tmp-[0-9a-f]{8}-\d+$/;

/** Removes the temporary files of `write` under `dir`. */
function removeTemporaries(dir: string): void {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) removeTemporaries(p);
    else if (TEMPORARY.test(e.name)) fs.rmSync(p, { force: true });
  }
}

/** In-memory twin of DirectorySink, for tests and library callers that want the files as values. */
export class MemorySink implements TileSink {
  readonly files = new Map<string, Uint8Array>();
  async initialize({ force, resume }: { force: boolean; resume: boolean }): Promise<void> {
    if (this.files.size > 0 && !force && !resume) throw new OutputError('output is not empty; use --force to replace it');
  }
  async begin({ force, resume }: { force: boolean; resume: boolean }): Promise<void> {
    for (const f of COMPLETION_FILES) this.files.delete(f);
    if (force && !resume) for (const k of [...this.files.keys()]) if (/^\d+\//.test(k)) this.files.delete(k);
  }
  async write(relPath: string, bytes: Uint8Array | string): Promise<void> {
    this.files.set(relPath, typeof bytes === 'string' ? new TextEncoder().encode(bytes) : new Uint8Array(bytes));
  }
  async read(relPath: string): Promise<Uint8Array | undefined> {
    return this.files.get(relPath);
  }
  async remove(relPath: string): Promise<void> {
    for (const k of [...this.files.keys()]) if (k === relPath || k.startsWith(`${relPath}/`)) this.files.delete(k);
  }
  async finish(): Promise<void> {}
}
