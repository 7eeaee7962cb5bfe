// Names of a build's archive outputs (pure): one archive per plane and format under a directory, the files beside
// a single archive, the descriptor assets that list the archives, and how a name reads back into plane and format.
import path from 'node:path';
import type { Asset } from '../model/descriptor.js';
import { DIMS, isPlaneIndex, type Dim, type Plane } from '../tiling/space.js';

export type ArchiveFormat = 'json' | 'pbf';

/** The media type of a PMTiles archive (IANA registration pending upstream; what the PMTiles project uses). */
export const PMTILES_MEDIA_TYPE = 'application/vnd.pmtiles';
/** Role of an archive in the descriptor's assets: it holds the tiles of the `tiles` template for its plane and format. */
export const ARCHIVE_ROLE = 'tiles';

/** `tiles.pbf.pmtiles`, or with plane dimensions `tiles-c1-z2.json.pmtiles` (only the dimensions in use, in path order). */
export function archiveName(plane: Plane, dims: readonly Dim[], format: ArchiveFormat): string {
  return `tiles${dims.map((d) => `-${d}${plane[d]}`).join('')}.${format}.pmtiles`;
}

const NAME = /^tiles(?:-[tcz](?:0|[1-9]\d*))*\.(?:json|pbf)\.pmtiles$/;

/** Whether `name` is one `archiveName` gives: under a directory, what a build may have written. */
export function isArchiveName(name: string): boolean {
  return NAME.test(name);
}

/**
 * What the descriptor of `-o DIR --archive pmtiles` lists: one asset per plane and format that holds tiles (`holds`),
 * in plane order, PBF first.
 */
export function archiveAssets(dims: readonly Dim[], planes: readonly Plane[], formats: { json: boolean; pbf: boolean }, holds: (plane: Plane, format: ArchiveFormat) => boolean = () => true): Asset[] {
  const out: Asset[] = [];
  for (const plane of planes) {
    for (const format of (['pbf', 'json'] as const).filter((f) => formats[f] && holds(plane, f))) {
      const where = dims.map((d) => `${d}=${plane[d]}`).join(', ');
      // Foreign members: the plane and format of the archive (a viewer picks the one of the plane it shows).
      const asset: Asset = { role: ARCHIVE_ROLE, href: archiveName(plane, dims, format), media_type: PMTILES_MEDIA_TYPE, title: `${format.toUpperCase()} tiles${where ? ` of ${where}` : ''}`, format };
      for (const d of dims) asset[d] = plane[d];
      out.push(asset);
    }
  }
  return out;
}

/** The archives a descriptor lists (its assets of the PMTiles media type), with their plane and format. */
export function listedArchives(descriptor: { assets?: unknown }): { href: string; plane: Plane; format: ArchiveFormat }[] {
  const assets = Array.isArray(descriptor.assets) ? (descriptor.assets as Asset[]) : [];
  return assets.filter((a) => a !== null && typeof a === 'object' && a.media_type === PMTILES_MEDIA_TYPE && typeof a.href === 'string').map((a) => {
    const plane: Plane = { t: 0, c: 0, z: 0 };
    // Only indexes: a plane is a path segment of the tiles extract writes.
    for (const d of DIMS) if (isPlaneIndex(a[d])) plane[d] = a[d];
    const format: ArchiveFormat = a.format === 'json' ? 'json' : 'pbf';
    return { href: a.href, plane, format };
  });
}

/** The member of a folder archive's metadata that names the archive itself: its name, plane and format. */
export const SELF_MEMBER = 'archive';

/**
 * The metadata of archive `href` of an `--archive` folder: the folder's descriptor and, as a foreign member, which of
 * its archives this one is (`{"href", "format", t, c, z}`), so that archives renamed or swapped are told apart.
 */
export function folderArchiveMetadata(descriptor: string, href: string): string {
  const d = JSON.parse(descriptor) as { assets?: Asset[] };
  const asset = (d.assets ?? []).find((a) => a.href === href && a.media_type === PMTILES_MEDIA_TYPE);
  if (asset === undefined) throw new Error(`internal: ${href} is not an archive the descriptor lists`);
  const self: Record<string, unknown> = { href, format: asset.format };
  for (const dim of DIMS) if (typeof asset[dim] === 'number') self[dim] = asset[dim];
  return `${JSON.stringify({ ...d, [SELF_MEMBER]: self }, null, 2)}\n`;
}

/** The name a folder archive was written under, as its metadata says; undefined where it does not (a single archive, an earlier version's). */
export function writtenAs(metadata: unknown): string | undefined {
  const self = (metadata as Record<string, unknown> | null)?.[SELF_MEMBER] as { href?: unknown } | undefined;
  return typeof self?.href === 'string' ? self.href : undefined;
}

/** `NAME (t=1, pbf tiles)`: an archive as its self member or its asset names it. */
function archiveSaid(a: Record<string, unknown>): string {
  return `${String(a.href)} (${DIMS.filter((d) => a[d] !== undefined).map((d) => `${d}=${String(a[d])}, `).join('')}${String(a.format)} tiles)`;
}

/**
 * Why an archive's metadata is not the descriptor, naming the members that differ: every archive of a folder says so
 * when `tileset.json` was edited, so the members tell an edit (one member, every archive) from one archive of another
 * build (many members, one archive).
 */
export function notTheDescriptor(metadata: unknown, descriptor: object): string {
  const a = (metadata !== null && typeof metadata === 'object' ? metadata : {}) as Record<string, unknown>;
  const b = descriptor as Record<string, unknown>;
  const differ = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k])).sort();
  return `its metadata is not the tileset descriptor${differ.length ? `: they differ in ${differ.slice(0, 5).join(', ')}${differ.length > 5 ? ', …' : ''} (tileset.json edited, or the archive another build's?)` : ' (members in another order)'}`;
}

/**
 * What is wrong with a folder archive's metadata (parsed) against the folder's descriptor and the asset that lists
 * it; undefined when nothing is. Metadata without the self member (archives of earlier versions) need only equal the
 * descriptor.
 */
export function folderArchiveProblem(metadata: Record<string, unknown>, descriptor: object, href: string): string | undefined {
  const { [SELF_MEMBER]: self, ...rest } = metadata;
  if (JSON.stringify(rest) !== JSON.stringify(descriptor)) return notTheDescriptor(rest, descriptor);
  if (self === undefined) return undefined;
  const written = (self ?? {}) as Record<string, unknown>;
  const asset = ((descriptor as { assets?: Asset[] }).assets ?? []).find((a) => a.href === href && a.media_type === PMTILES_MEDIA_TYPE);
  const listed: Record<string, unknown> = { href, format: asset?.format };
  for (const d of DIMS) if (asset?.[d] !== undefined) listed[d] = asset[d];
  if (archiveSaid(written) === archiveSaid(listed)) return undefined;
  return `its metadata says it was written as ${archiveSaid(written)}, but tileset.json lists it as ${archiveSaid(listed)}: archives renamed or swapped? Put each back under the name it was written as`;
}

/**
 * When `file` is one of the archives its own metadata lists (one plane and format of an `--archive` folder), what to
 * give instead: the folder (`folderDescriptor`: its tileset.json is beside the file), or, copied away from it, the
 * whole folder; the same for one renamed (its metadata lists archives, none by its name); undefined for an archive
 * that stands alone.
 */
export function folderMemberProblem(descriptor: { assets?: unknown; tiles?: unknown }, file: string, verb: string, folderDescriptor: boolean): string | undefined {
  const listed = listedArchives(descriptor);
  const name = path.basename(file);
  // Its metadata names the archive it was written as (builds since the self member); else its name must.
  const written = writtenAs(descriptor);
  const member = listed.find((a) => a.href === (written ?? name));
  // Renamed: its metadata is still the folder's descriptor, whose tile template its tiles do not answer.
  if (!member && listed.length > 0) {
    return `${file} holds the descriptor of a folder build, which lists ${listed.length} archive(s) (${listed[0].href}${listed.length > 1 ? ', …' : ''}), but is not one of them by name (renamed?): it is not read alone; ${verb} the whole folder the build wrote (every archive, under its own name, and tileset.json)`;
  }
  if (!member) return undefined;
  const template = Array.isArray(descriptor.tiles) ? String(descriptor.tiles[0]) : '';
  const plane = [...template.matchAll(/\{([tcz])\}/g)].map((m) => `${m[1]}=${member.plane[m[1] as Dim]}`).join(', ');
  const kind = `one archive of a folder build (${plane ? `plane ${plane}, ` : ''}${member.format} tiles)`;
  if (written !== undefined && written !== name) {
    return `${file} was written as ${written}, ${kind}, and renamed: it is not read alone; put it back under its name among the folder's other archives and ${verb} the whole folder (every archive and tileset.json)`;
  }
  const what = `${file} is ${kind}`;
  const folder = path.dirname(file);
  // Copied away from its folder, there is no folder to point to: what is missing is said instead.
  if (!folderDescriptor) return `${what}, without the folder's tileset.json beside it: it is not read alone; ${verb} the whole folder the build wrote (every archive and tileset.json)`;
  return `${what}: ${verb} the folder, ${folder}, whose tileset.json lists it`;
}

/** `slide.pmtiles` → `slide`: the stem the files beside a single archive start with. */
function stem(file: string): string {
  return file.replace(/\.pmtiles$/i, '');
}

/** Files beside `-o FILE.pmtiles`: the run report (`FILE` less `.pmtiles`, then `.build-report.json`). */
export function besideArchive(file: string, relPath: string): string | undefined {
  return relPath === 'build-report.json' ? `${stem(file)}.build-report.json` : undefined;
}

/** The work directory of `-o FILE.pmtiles`: hidden beside it, as `.mudm-work` is inside a directory output. */
export function archiveWorkDir(file: string): string {
  return path.join(path.dirname(file), `.${path.basename(file)}.mudm-work`);
}
