// Read access to a build's archives as a pyramid: FILE.pmtiles, or a directory whose tileset.json lists archives. The
// tiles appear at their spec paths, so inspect, verify and extract read archives exactly as they read directories.
import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { besideArchive, folderArchiveProblem, folderMemberProblem, listedArchives, notTheDescriptor, type ArchiveFormat } from '../archive/archive-names.js';
import { Compression, MAGIC, TileType, type PmtilesHeader } from '../archive/pmtiles-format.js';
import { MAX_TILE, openPmtiles, type PmtilesArchive } from '../archive/pmtiles-reader.js';
import type { TilesetDescriptor } from '../model/descriptor.js';
import { InputError, UsageError } from '../report/errors.js';
import { isPlaneIndex, tilePath, type Plane } from '../tiling/space.js';
import { dimsOfTemplate } from './layout.js';
import { directoryReader, resolvesInside, sortNames, tileFileRoot, type ArchiveFacts, type PyramidReader } from './reader.js';
import { problem, withoutFile, type Problem } from './verify-problems.js';

/** One archive of the output, open for reading. */
interface Member { file: string; fd: number; gzip: boolean }

/**
 * A pyramid read from archives. Opening indexes every tile (its path, archive, offset and length: about 100 bytes a
 * tile); reads are synchronous, as directory reads are. What is wrong with an archive itself (unreadable, another
 * tile type, metadata that is not the descriptor) is kept in `problems` for verify.
 */
export class ArchiveReader implements PyramidReader {
  readonly problems: Problem[] = [];
  readonly notes: string[] = [];
  readonly archives: ArchiveFacts[] = [];
  private readonly members: Member[] = [];
  private readonly where = new Map<string, number>();
  private readonly member: number[] = [];
  private readonly offset: number[] = [];
  private readonly length: number[] = [];
  private readonly children = new Map<string, Set<string>>();
  /**
   * Tiles the directories address past the end of a file cut short: not listed (verify says the archive was cut
   * short), but asked for by address they are an error, as a tile whose gzip fails is, not an empty tile.
   */
  private readonly lost = new Map<string, { file: string; message: string }>();

  private constructor(
    readonly name: string,
    /** `tileset.json` as a directory build writes it. */
    private readonly descriptorText: string,
    /** Files beside the archives (report, previews): a directory, or the single archive's report file. */
    private readonly aux: PyramidReader | { file: string },
  ) {}

  /** One archive file, whole once it has its name: its report is beside it, not part of it. */
  get wholeWithoutReport(): boolean {
    return 'file' in this.aux;
  }

  /** Opens FILE.pmtiles, or a directory whose tileset.json lists archives; undefined for a directory that lists none. */
  static async open(target: string): Promise<ArchiveReader | undefined> {
    const st = fs.statSync(target, { throwIfNoEntry: false });
    if (st === undefined) return undefined;
    if (st.isDirectory()) return ArchiveReader.openDirectory(target);
    const archive = await openPmtiles(target);
    let descriptor: TilesetDescriptor;
    try {
      descriptor = asDescriptor(await archive.metadata(), target);
    } catch (err) {
      await archive.close();
      throw err;
    }
    // One of a folder's archives (--archive): its tiles are one plane of a pyramid that only the folder holds whole.
    const whyNot = folderMemberProblem(descriptor, target, 'give', fs.existsSync(path.join(path.dirname(target), 'tileset.json')));
    if (whyNot) {
      await archive.close();
      throw new UsageError(whyNot);
    }
    const reader = new ArchiveReader(target, `${JSON.stringify(descriptor, null, 2)}\n`, { file: besideArchive(target, 'build-report.json') as string });
    const b = descriptor.bounds;
    // One plane: the low corner of 10-number bounds (t, c, z first), as a single-plane build writes them.
    const plane: Plane = Array.isArray(b) && b.length === 10 ? { t: b[0], c: b[1], z: b[2] } : { t: 0, c: 0, z: 0 };
    if (!isPlaneIndex(plane.t) || !isPlaneIndex(plane.c) || !isPlaneIndex(plane.z)) {
      await archive.close();
      throw new InputError(`${target}: its metadata's bounds name a plane that is no index (t, c, z: non-negative integers): ${JSON.stringify(b)}`, target);
    }
    // The format the descriptor names (its tile template's too); the header's tile type is checked against it.
    const format = descriptor.format === 'pbf' || descriptor.format === 'json' ? descriptor.format : archive.header.tileType === TileType.Mvt ? 'pbf' : 'json';
    await reader.add(target, archive, descriptor, plane, format);
    return reader;
  }

  private static async openDirectory(dir: string): Promise<ArchiveReader | undefined> {
    const files = directoryReader(dir, true);
    const bytes = files.read('tileset.json');
    if (bytes === undefined) return undefined;
    let descriptor: TilesetDescriptor;
    try {
      descriptor = asDescriptor(JSON.parse(Buffer.from(bytes).toString('utf8')), path.join(dir, 'tileset.json'));
    } catch {
      return undefined; // verify reports an unusable descriptor as it does for any directory
    }
    const listed = listedArchives(descriptor);
    if (listed.length === 0) return undefined;
    const reader = new ArchiveReader(dir, Buffer.from(bytes).toString('utf8'), files);
    const realDir = fs.realpathSync(dir);
    for (const a of listed) {
      if (path.basename(a.href) !== a.href || a.href.startsWith('.')) {
        reader.problems.push(problem('archive-invalid', 'tileset.json', `archive asset ${JSON.stringify(a.href)} is not a file name beside tileset.json`));
        continue;
      }
      // Read wherever it lies (archives kept on a bigger disk and linked in), but serve serves only what is inside.
      if (!resolvesInside(realDir, path.join(dir, a.href)) && fs.existsSync(path.join(dir, a.href))) {
        reader.notes.push(`${a.href} is a symbolic link out of the folder: read here, but serve does not serve it (copy it into the folder to host it)`);
      }
      let archive: PmtilesArchive;
      const full = path.join(dir, a.href);
      try {
        archive = await openPmtiles(full);
      } catch (err) {
        reader.problems.push(problem('archive-invalid', a.href, withoutFile((err as Error).message, full)));
        continue;
      }
      await reader.add(a.href, archive, descriptor, a.plane, a.format);
    }
    return reader;
  }

  /** Indexes the tiles of one archive (and closes its asynchronous handle: reads go through a descriptor of its own). */
  private async add(rel: string, archive: PmtilesArchive, descriptor: TilesetDescriptor, plane: Plane, format: ArchiveFormat): Promise<void> {
    try {
      const h = archive.header;
      const wantType = format === 'pbf' ? TileType.Mvt : TileType.Other;
      if (h.tileType !== wantType) this.problems.push(problem('archive-invalid', rel, `holds ${format} tiles, so its tile type must be ${wantType}, found ${h.tileType}`));
      if (h.tileCompression !== Compression.None && h.tileCompression !== Compression.Gzip) {
        this.problems.push(problem('archive-invalid', rel, `tile compression ${h.tileCompression} is not one a build writes (none or gzip)`));
        return;
      }
      const metadata = await archive.metadata();
      const wrong = !this.wholeWithoutReport && metadata !== null && typeof metadata === 'object' ? folderArchiveProblem(metadata as Record<string, unknown>, descriptor, rel)
        : JSON.stringify(metadata) !== JSON.stringify(descriptor) ? notTheDescriptor(metadata, descriptor) : undefined;
      if (wrong) this.problems.push(problem('archive-invalid', rel, wrong));
      const dims = dimsOfTemplate(descriptor.tiles[0]);
      const k = this.members.length;
      this.members.push({ file: archive.name, fd: fs.openSync(archive.name, 'r'), gzip: h.tileCompression === Compression.Gzip });
      let addressed = 0, minZoom = Infinity, maxZoom = -Infinity, end = 0, beyond = 0, firstBeyond = '';
      const contents = new Set<number>();
      const size = fs.fstatSync(this.members[k].fd).size;
      this.archives.push({ path: rel, bytes: size, tileCompression: h.tileCompression === Compression.Gzip ? 'gzip' : 'none' });
      for await (const t of archive.tiles()) {
        addressed++;
        contents.add(t.offset);
        minZoom = Math.min(minZoom, t.z);
        maxZoom = Math.max(maxZoom, t.z);
        end = Math.max(end, t.offset + t.length);
        const p = tilePath(t.z, t.x, t.y, plane, dims, format);
        // Past the end of a file cut short: not there to read (the problem below says so).
        if (t.offset + t.length > size) {
          this.lost.set(p, { file: archive.name, message: `${archive.name}: tile ${p} lies at bytes ${t.offset}–${t.offset + t.length - 1}, past the end of the file (${size} bytes): the archive was cut short` });
          continue;
        }
        // PMTiles entries have a length above 0 and lie in the tile data section the header gives.
        if (t.length === 0) this.problems.push(problem('archive-invalid', rel, `tile ${p} has a length of 0 in its directory (PMTiles asks for more)`));
        else if (t.offset + t.length > h.tileDataOffset + h.tileDataLength && beyond++ === 0) firstBeyond = `${p} (bytes ${t.offset}–${t.offset + t.length - 1})`;
        // Two entries of one archive (a directory that repeats a tile id) or two archives (planes listed twice).
        if (this.where.has(p)) this.problems.push(problem('archive-invalid', rel, `tile ${p} is ${this.member[this.where.get(p) as number] === k ? 'addressed twice in it' : 'in another archive too'}`));
        this.where.set(p, this.offset.length);
        this.member.push(k);
        this.offset.push(t.offset);
        this.length.push(t.length);
        this.addPath(p);
      }
      if (beyond > 0) this.problems.push(problem('archive-invalid', rel, `${beyond} tile(s) lie past the tile data section the header gives (bytes ${h.tileDataOffset}–${h.tileDataOffset + h.tileDataLength - 1}), the first ${firstBeyond}`));
      this.checkHeader(rel, h, { addressed, contents: contents.size, minZoom, maxZoom });
      if (end > size) this.problems.push(problem('archive-invalid', rel, `its tiles reach byte ${end}, the file ends at ${size}: it was cut short`));
    } catch (err) {
      if (!(err instanceof InputError)) throw err;
      // The problem names the archive already: the reader's message need not again.
      this.problems.push(problem('archive-invalid', rel, err.message.startsWith(`${archive.name}: `) ? err.message.slice(archive.name.length + 2) : err.message));
    } finally {
      await archive.close();
    }
  }

  /** The header's counts and zooms against the directories (0 is "unknown" for a count, as the spec allows). */
  private checkHeader(rel: string, h: PmtilesHeader, found: { addressed: number; contents: number; minZoom: number; maxZoom: number }): void {
    const say = (what: string, header: number, dirs: number) => this.problems.push(problem('archive-invalid', rel, `the header says ${header} ${what}, the directories hold ${dirs}`));
    if (h.addressedTiles !== 0 && h.addressedTiles !== found.addressed) say('addressed tiles', h.addressedTiles, found.addressed);
    if (h.tileContents !== 0 && h.tileContents !== found.contents) say('distinct tile contents', h.tileContents, found.contents);
    if (found.addressed > 0 && (h.minZoom !== found.minZoom || h.maxZoom !== found.maxZoom)) {
      this.problems.push(problem('archive-invalid', rel, `the header says zooms ${h.minZoom}..${h.maxZoom}, the tiles are at zooms ${found.minZoom}..${found.maxZoom}`));
    }
  }

  private addPath(p: string): void {
    let dir = '';
    for (const part of p.split('/')) {
      let names = this.children.get(dir);
      if (!names) this.children.set(dir, (names = new Set()));
      names.add(part);
      dir = dir === '' ? part : `${dir}/${part}`;
    }
  }

  /** Every tile path, in archive order (tile ids, archive after archive). */
  tilePaths(): IterableIterator<string> {
    return this.where.keys();
  }

  read(relPath: string): Uint8Array | undefined {
    const i = this.where.get(relPath);
    if (i !== undefined) {
      const m = this.members[this.member[i]];
      const buf = Buffer.alloc(this.length[i]);
      for (let done = 0; done < buf.length;) {
        const n = fs.readSync(m.fd, buf, done, buf.length - done, this.offset[i] + done);
        if (n === 0) throw new InputError(`${m.file} was cut short while being read`, m.file);
        done += n;
      }
      try {
        return m.gzip ? gunzipSync(buf, { maxOutputLength: MAX_TILE }) : buf;
      } catch (err) {
        throw new InputError(`${m.file}: tile ${relPath} does not gunzip: ${(err as Error).message}`, m.file);
      }
    }
    const lost = this.lost.get(relPath);
    if (lost !== undefined) throw new InputError(lost.message, lost.file);
    if (relPath === 'tileset.json') return Buffer.from(this.descriptorText);
    if ('file' in this.aux) {
      if (relPath !== 'build-report.json') return undefined;
      try {
        return fs.readFileSync(this.aux.file);
      } catch {
        return undefined;
      }
    }
    return this.aux.read(relPath);
  }

  list(relDir: string): string[] {
    const dir = relDir.replace(/^\.?\/*|\/+$/g, '');
    const names = new Set(this.children.get(dir) ?? []);
    if ('file' in this.aux) {
      if (dir === '') {
        names.add('tileset.json');
        if (fs.existsSync(this.aux.file)) names.add('build-report.json');
      }
    } else if (!/^\d+(\/|$)/.test(dir)) {
      // Files beside the archives (not the archives, nor hidden state): the tiles are the archives' only.
      for (const n of this.aux.list(dir)) if (!n.startsWith('.') && !n.endsWith('.pmtiles') && !/^\d+$/.test(n)) names.add(n);
    }
    return sortNames([...names]);
  }

  close(): void {
    for (const m of this.members.splice(0)) fs.closeSync(m.fd);
  }
}

function asDescriptor(value: unknown, where: string): TilesetDescriptor {
  const d = value as TilesetDescriptor | null;
  if (d === null || typeof d !== 'object' || Array.isArray(d.tiles) === false || typeof d.tiles[0] !== 'string') {
    throw new InputError(`${where}: the metadata is not a tileset descriptor (no tiles template)`, where);
  }
  return d;
}

/** A reader of whatever `target` is: an archive, a directory of archives, or a pyramid directory. */
export async function openPyramidReader(target: string): Promise<PyramidReader & { close(): void }> {
  if (!fs.existsSync(target)) throw new InputError(`${target}: no such ${/\.pmtiles$/i.test(target) ? 'archive' : 'pyramid directory or archive'}`, target);
  const other = otherFile(target);
  if (other) throw new InputError(other, target);
  const archives = await ArchiveReader.open(target);
  return archives ?? { ...directoryReader(target), close() {} };
}

/**
 * What a file given for a pyramid is when it is no PMTiles archive (no name .pmtiles, no magic): a tile of a pyramid
 * directory, or anything else (an input file). Undefined for an archive, or a file that may be one.
 */
function otherFile(target: string): string | undefined {
  if (/\.pmtiles$/i.test(target) || !fs.statSync(target).isFile()) return undefined;
  const head = Buffer.alloc(MAGIC.length);
  const fd = fs.openSync(target, 'r');
  try {
    fs.readSync(fd, head, 0, MAGIC.length, 0);
  } finally {
    fs.closeSync(fd);
  }
  if (head.toString('latin1') === MAGIC) return undefined;
  const tile = tileFileRoot(target);
  if (tile) return `${target} is a tile of the pyramid ${tile.root}: give the pyramid (${tile.root}), or to read this tile, inspect ${tile.root} ${tile.address}`;
  return `${target} is neither a pyramid directory nor a PMTiles archive: give the folder that holds tileset.json, or a .pmtiles file (an input file is checked by mudm-tiles validate)`;
}
