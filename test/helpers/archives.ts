// Builds into PMTiles archives for the serve and viewer tests: one archive of PBF tiles (`-o slide.pmtiles`), or one per
// plane and format under OUT with OUT/tileset.json listing them as assets (`-o OUT --archive pmtiles`).
import fs from 'node:fs';
import path from 'node:path';
import { TileType } from '../../src/archive/pmtiles-format.js';
import { PmtilesSink } from '../../src/archive/pmtiles-sink.js';
import { buildPyramid, type InputSpec } from '../../src/build/pipeline.js';
import { MemorySink, type TileSink } from '../../src/io/sink.js';
import type { Options } from '../../src/options.js';

/** `z/…plane…/x/y.ext`, as the build writes tile paths. */
const TILE_PATH = /^\d+((?:\/\d+)*)\/\d+\/\d+\.(json|pbf)$/;

/** Tiles of each plane and format to an archive of their own (opened on the first tile); everything else to memory. */
class ArchiveRouter implements TileSink {
  readonly archives = new Map<string, { sink: PmtilesSink; plane: number[]; format: string }>();
  readonly rest = new MemorySink();
  private opts = { force: true, resume: false };

  constructor(private readonly name: (plane: number[], format: string) => string | undefined) {}

  async initialize(o: { force: boolean; resume: boolean }) {
    this.opts = o;
    await this.rest.initialize(o);
  }
  async begin(o: { force: boolean; resume: boolean }) {
    await this.rest.begin(o);
  }
  private async route(rel: string): Promise<TileSink> {
    const m = TILE_PATH.exec(rel);
    const plane = m ? m[1].split('/').slice(1).map(Number) : [];
    const file = m && this.name(plane, m[2]);
    if (!m || !file) return this.rest;
    let a = this.archives.get(file);
    if (!a) {
      a = { sink: new PmtilesSink(file, { tileType: m[2] === 'pbf' ? TileType.Mvt : TileType.Other }), plane, format: m[2] };
      this.archives.set(file, a);
      await a.sink.initialize(this.opts);
      await a.sink.begin(this.opts);
    }
    return a.sink;
  }
  async write(rel: string, bytes: Uint8Array | string) {
    await (await this.route(rel)).write(rel, bytes);
  }
  async read(rel: string) {
    return (await this.route(rel)).read(rel);
  }
  async remove(rel: string) {
    await (await this.route(rel)).remove(rel);
  }
  async finish() {
    await this.rest.finish();
    const descriptor = this.rest.files.get('tileset.json') as Uint8Array;
    for (const { sink } of this.archives.values()) {
      await sink.write('tileset.json', descriptor);
      await sink.finish();
    }
  }
  descriptor(): Record<string, unknown> {
    return JSON.parse(Buffer.from(this.rest.files.get('tileset.json') as Uint8Array).toString('utf8')) as Record<string, unknown>;
  }
}

/** Builds a one-plane input into one archive of its PBF tiles, the descriptor as its metadata; returns the descriptor. */
export async function buildArchive(inputs: InputSpec[], options: Partial<Options>, file: string): Promise<Record<string, unknown>> {
  const router = new ArchiveRouter((plane, format) => (format === 'pbf' ? file : undefined));
  await buildPyramid(inputs, { ...options, format: 'pbf' }, { sink: router });
  if (router.archives.size !== 1) throw new Error(`expected the tiles of one plane, found ${router.archives.size} archives`);
  return router.descriptor();
}

/** An archive a folder's descriptor lists. */
export interface ListedArchive { href: string; format: string; plane: Record<string, number> }

/**
 * Builds into one archive per plane and format under `out` (`tiles-c1-z2.pbf.pmtiles`), then `out/tileset.json`:
 * the build's descriptor with the archives as assets (role `tiles`, media type `application/vnd.pmtiles`, `format`,
 * the plane's `t`/`c`/`z`). Returns the assets.
 */
export async function buildArchiveFolder(inputs: InputSpec[], options: Partial<Options>, out: string): Promise<ListedArchive[]> {
  fs.mkdirSync(out, { recursive: true });
  const router = new ArchiveRouter((plane, format) => path.join(out, `plane-${plane.join('-')}.${format}.pmtiles`));
  await buildPyramid(inputs, options, { sink: router });
  const descriptor = router.descriptor();
  // The plane dimensions in path order, as the template names them: the archives are named after them now.
  const dims = [...String((descriptor.tiles as string[])[0]).matchAll(/\{([tcz])\}/g)].map((m) => m[1]);
  const listed: ListedArchive[] = [];
  for (const [file, a] of router.archives) {
    const href = `tiles${a.plane.map((v, i) => `-${dims[i]}${v}`).join('')}.${a.format}.pmtiles`;
    fs.renameSync(file, path.join(out, href));
    listed.push({ href, format: a.format, plane: Object.fromEntries(a.plane.map((v, i) => [dims[i], v])) });
  }
  listed.sort((a, b) => (a.href < b.href ? -1 : 1));
  descriptor.assets = [...((descriptor.assets as object[] | undefined) ?? []), ...listed.map((a) => ({ role: 'tiles', href: a.href, media_type: 'application/vnd.pmtiles', format: a.format, ...a.plane }))];
  fs.writeFileSync(path.join(out, 'tileset.json'), JSON.stringify(descriptor));
  return listed;
}
