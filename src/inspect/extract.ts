// `extract`: a build's archives back into the spec's directory layout, byte for byte what a directory build writes.
import fs from 'node:fs';
import path from 'node:path';
import { PMTILES_MEDIA_TYPE } from '../archive/archive-names.js';
import { MAX_ZOOM } from '../archive/pmtiles-format.js';
import type { Asset, TilesetDescriptor } from '../model/descriptor.js';
import { pathOverlap } from '../io/dirs.js';
import { DirectorySink, type Removal } from '../io/sink.js';
import { InputError, InterruptedError, UsageError } from '../report/errors.js';
import { isArchiveFile } from '../options.js';
import { ArchiveReader } from './archive-reader.js';

/** Tiles written, and every file (tiles, report, previews, descriptor) with their bytes; what --force removed first. */
export interface ExtractResult { tiles: number; files: number; bytes: number; removed?: Removal }

/**
 * Writes every tile of the archives at its path under `out`, the run report and the previews as they are, and
 * `tileset.json` last without the archive assets (which a directory does not have): the descriptor a directory build
 * of the same input writes. The usual output rules hold: a non-empty `out` needs `force`.
 */
export async function extractArchives(input: string, out: string, opts: { force: boolean; signal?: AbortSignal }): Promise<ExtractResult> {
  if (!fs.existsSync(input)) throw new InputError(`${input}: no such archive or directory`, input);
  // A directory named like an archive would pass for one, to readers and to people (build refuses it too).
  if (isArchiveFile(out.replace(/[\\/]+$/, ''))) throw new UsageError(`extract writes a directory, and ${out} names an archive: give -o a directory name`);
  const reader = await ArchiveReader.open(input);
  if (!reader) {
    // A folder without a readable descriptor is not a pyramid (or its build has not finished), as for verify and inspect.
    if (!readableJson(path.join(input, 'tileset.json'))) throw new InputError(`${input} has no readable tileset.json: not a pyramid, or one whose build has not finished; nothing to extract`, input);
    throw new UsageError(`${input} is neither a PMTiles archive nor a directory whose tileset.json lists archives`);
  }
  // A damaged archive would extract to a pyramid with tiles missing that looks whole: nothing is written.
  const refuse = (why: string, removed = 0) => new InputError(`${input} cannot be extracted whole (${why}); nothing was written${
    removed > 0 ? ` (--force had removed the earlier output's ${removed} files)` : ''}; mudm-tiles verify lists what is wrong`, input);
  try {
    refuseOverlap(input, out);
    if (reader.problems.length > 0) {
      throw refuse(`${reader.problems.slice(0, 5).map((p) => `${p.path}: ${p.message}`).join('; ')}${reader.problems.length > 5 ? '; …' : ''}`);
    }
    // A folder build's report is part of it (verify says report-missing); extracted without it, the directory would
    // verify as one archive copied alone does.
    if (fs.statSync(input).isDirectory() && !fs.existsSync(path.join(input, 'build-report.json'))) {
      throw refuse(`its build-report.json is missing, which a folder build writes beside its archives`);
    }
    // --force removes the earlier output before the first write: a tile damaged inside the archive (seen only when it
    // is read) must stop the extract before that, so every tile is read once first (extracting writes them, far slower).
    if (opts.force && holdsEntries(out)) {
      try {
        for (const rel of reader.tilePaths()) reader.read(rel);
      } catch (err) {
        throw err instanceof InputError ? refuse(err.message) : err;
      }
    }
    const sink = new DirectorySink(out);
    await sink.initialize({ force: opts.force, resume: false });
    const removal = await sink.begin({ force: opts.force, resume: false });
    try {
      return { ...(await copyAll(reader, sink, opts.signal)), ...(removal ? { removed: removal } : {}) };
    } catch (err) {
      // What was written goes again (stopped by a signal too: there is no resuming an extract, and a tree of tiles
      // without its descriptor is no pyramid); what --force removed before (a failure other than a damaged tile) is said.
      sink.discard();
      if (err instanceof InterruptedError) throw new ExtractInterrupted(removal?.files ?? 0);
      throw err instanceof InputError ? refuse(err.message, removal?.files ?? 0) : err;
    }
  } finally {
    reader.close();
  }
}

/**
 * Refuses an output that is the input, holds it or lies inside it: `--force` would remove the archives being read
 * (they are in a folder build's record), and tiles written into the input folder would mix with its archives.
 */
function refuseOverlap(input: string, out: string): void {
  const overlap = pathOverlap(out, input);
  if (overlap) throw new UsageError(`extract cannot write ${out}: it ${overlap} the input ${input}; choose an output outside it`);
}

/** Extract stopped by its signal, having removed what it wrote; `earlierFiles`: those --force had removed before. */
export class ExtractInterrupted extends InterruptedError {
  constructor(readonly earlierFiles: number) {
    super('extract interrupted', false);
  }
}

/** Tiles written between two turns of the event loop, where a signal's handler can abort the copy. */
const TILES_PER_TURN = 64;

/** Every tile, then the report and previews, then the descriptor: what `extractArchives` writes. */
async function copyAll(reader: ArchiveReader, sink: DirectorySink, signal?: AbortSignal): Promise<ExtractResult> {
  const result: ExtractResult = { tiles: 0, bytes: 0, files: 0 };
  const copy = async (rel: string): Promise<boolean> => {
    // The writes are synchronous: without a turn of the event loop now and then a signal is seen only at the end.
    if (result.files % TILES_PER_TURN === 0) await new Promise((resolve) => setImmediate(resolve));
    if (signal?.aborted) throw new InterruptedError('extract interrupted', false);
    const bytes = reader.read(rel);
    if (bytes === undefined) return false;
    await sink.write(rel, bytes);
    result.bytes += bytes.length;
    result.files++;
    return true;
  };
  const descriptor = JSON.parse(Buffer.from(reader.read('tileset.json') as Uint8Array).toString('utf8')) as TilesetDescriptor;
  // Every zoom's folder, as a directory build makes them, whether or not a tile lies there; from metadata that is a
  // build's (zooms a build can make), else only those of the tiles.
  const min: unknown = descriptor.minzoom, max: unknown = descriptor.maxzoom;
  if (typeof min === 'number' && typeof max === 'number' && Number.isInteger(min) && Number.isInteger(max) && min >= 0 && min <= max && max <= MAX_ZOOM) {
    sink.directTiles(Array.from({ length: max - min + 1 }, (_, i) => min + i));
  }
  for (const rel of reader.tilePaths()) if (await copy(rel)) result.tiles++;
  const assets = (descriptor.assets ?? []).filter((a: Asset) => a.media_type !== PMTILES_MEDIA_TYPE);
  // The files a build writes beside its tiles: the report, and the previews its descriptor lists.
  for (const rel of ['build-report.json', ...assets.map((a) => a.href).filter(isLocalFile)]) await copy(rel);
  if (assets.length) descriptor.assets = assets;
  else delete descriptor.assets;
  if (signal?.aborted) throw new InterruptedError('extract interrupted', false);
  await sink.write('tileset.json', `${JSON.stringify(descriptor, null, 2)}\n`);
  await sink.finish();
  result.files++;
  return result;
}

/** A relative href naming a file below the descriptor (no scheme, no climbing out, no hidden names). */
function isLocalFile(href: string): boolean {
  return !/^[a-z][a-z0-9+.-]*:/i.test(href) && !href.startsWith('/') && href.split('/').every((s) => s !== '' && !s.startsWith('.'));
}

/** Whether `dir` is a folder with something in it. */
function holdsEntries(dir: string): boolean {
  try {
    return fs.readdirSync(dir).length > 0;
  } catch {
    return false;
  }
}

/** Whether `file` holds JSON. */
function readableJson(file: string): boolean {
  try {
    JSON.parse(fs.readFileSync(file, 'utf8'));
    return true;
  } catch {
    return false;
  }
}
