// Where the viewer's tiles come from: the URLs of the descriptor's `tiles` template, or PMTiles archives read by HTTP
// range requests (ol-pmtiles), so that a pyramid on any static host with range support opens without a tile server.
//
// An archive is opened directly (`?tileset=slide.pmtiles`: its metadata is the descriptor), or through a tileset.json
// whose `assets` list one archive per plane and format (role `tiles`, media type `application/vnd.pmtiles`, `format`,
// the plane's `t`/`c`/`z`). Either way the map is in pixel space: the archive header's lon/lat bounds are ignored.

import { BY_LAYER } from './colours.js';
import { messageOf, readDescriptor, REFUSED } from './descriptor.js';
import { PLANE_DIMS } from './state.js';

const PMTILES_MEDIA_TYPE = 'application/vnd.pmtiles';
/** PMTiles tile type of Mapbox Vector Tiles: the only tiles the viewer draws. */
const PMTILES_MVT = 1;
/** OpenLayers' TileState.ERROR (the global build does not export the enum). */
const TILE_ERROR = 3;

/** The format of every vector tile the viewer reads: a feature's layer name under BY_LAYER, its data as it is. */
export const mvtFormat = (ol) => new ol.format.MVT({ layerName: BY_LAYER });

/** Whether a URL names a PMTiles archive: by the name its path ends with, whatever its query (a signed URL). */
const isArchiveUrl = (url) => new URL(url).pathname.toLowerCase().endsWith('.pmtiles');

/**
 * Resolves a URL template against a base, its {placeholders} kept as they are: each stands aside as a marker while the
 * URL is resolved (braces would be percent-encoded), so a brace in the base (a folder named `run {c}`) stays encoded.
 */
function resolveTemplate(template, base) {
  const names = [];
  const marked = template.replace(/\{([a-z]+)\}/g, (m, name) => `MUDMPLACEHOLDER${names.push(name) - 1}X`);
  return new URL(marked, base).href.replace(/MUDMPLACEHOLDER(\d+)X/g, (m, i) => `{${names[Number(i)]}}`);
}

/** The PBF archives a descriptor lists, each with its absolute URL and plane. */
function archiveAssets(descriptor, base) {
  return (descriptor.assets ?? [])
    .filter((a) => a && a.role === 'tiles' && a.media_type === PMTILES_MEDIA_TYPE && a.format === 'pbf' && typeof a.href === 'string')
    .map((a) => ({ url: new URL(a.href, base).href, plane: Object.fromEntries(PLANE_DIMS.filter((d) => Number.isInteger(a[d])).map((d) => [d, a[d]])) }));
}

/**
 * A tile load function that fills a vector tile from `read()` (bytes, or null for an empty tile). A failed read marks
 * the tile failed, with its reason in `tile.failure`, so that the source fires `tileloaderror`: ol-pmtiles' own
 * loader set the tile loaded (no features) before failed, and OpenLayers then fired no event at all.
 */
function loadWith(read) {
  return (tile, src) => tile.setLoader((extent, resolution, projection) => {
    read(src)
      // Decoded in the chain: bytes that are no vector tile fail the tile too, rather than leave it loading for good.
      .then((bytes) => (bytes ? decodeTile(tile, bytes, { extent, featureProjection: projection }) : []))
      .then((features) => tile.setFeatures(features), (err) => {
        tile.failure = messageOf(err);
        tile.setState(TILE_ERROR);
      });
  });
}

/** A vector tile's features; bytes that are none are said so (the decoder's words were "Unimplemented type: 3"). */
function decodeTile(tile, bytes, options) {
  try {
    return tile.getFormat().readFeatures(bytes, options);
  } catch (err) {
    throw new Error(`${bytes.byteLength} bytes that do not decode as a vector tile (${messageOf(err)})`);
  }
}

/**
 * A tile's bytes by URL: null for an empty tile, which is not written: 204 from `serve`, 404 from a static host.
 * `serve` answers 404 only for what the pyramid cannot hold, or an archive gone: from it (`served`) a 404 fails the tile.
 * `seen(archive)` gets the ETag of the archive `serve` read the tile from (`X-Pyramid-Archive`), when it says.
 */
async function fetchTile(url, served, seen) {
  const response = await fetch(url);
  if (response.status === 204 || (response.status === 404 && !served)) return null;
  if (!response.ok) {
    const said = await saidWith(response);
    throw new Error(`${url}: HTTP ${response.status}${said ? ` (${said})` : response.status === 404 ? ' (from serve: not a tile of this pyramid, or its archive is gone)' : ''}`);
  }
  const archive = response.headers.get('X-Pyramid-Archive');
  if (archive) seen(archive);
  // A body that fails after its headers came (a gzip that does not decode) was the browser's bare "Failed to fetch".
  return response.arrayBuffer().catch((err) => {
    const gzip = /gzip/i.test(response.headers.get('Content-Encoding') ?? '') ? 'its gzip does not decode (the tile or its archive is damaged: mudm-tiles verify names them), or ' : '';
    throw new Error(`${url}: HTTP ${response.status}, but the tile did not arrive (${messageOf(err)}): ${gzip}the connection broke`);
  });
}

/** What a host said with an error status in a line of plain text (serve names the archive at fault), else ''. */
async function saidWith(response) {
  if (!/^text\/plain/i.test(response.headers.get('Content-Type') ?? '')) return '';
  const text = (await response.text().catch(() => '')).trim();
  return text.length <= 300 && text !== 'not found' ? text : '';
}

/**
 * Tiles by URL: the template with the plane filled in and {zlvl} renamed to OpenLayers' {z}; `served`: the name
 * `serve` gave the descriptor it came from (see fetchTile), else undefined. An archive `serve` serves that is replaced
 * while viewed (a tile from an archive of another ETag than every one before) calls the `onChange` listeners.
 */
function urlTiles(ol, template, served) {
  const planeUrl = (plane) => template.replace(/\{([a-z]+)\}/g, (m, name) => (name === 'zlvl' ? '{z}' : PLANE_DIMS.includes(name) ? String(plane[name]) : m));
  const changeListeners = [];
  // Every archive read so far: a tile of the old one arriving after one of the new one is not another change.
  const archives = new Set();
  const seen = (archive) => {
    if (archives.has(archive)) return;
    archives.add(archive);
    if (archives.size > 1) changeListeners.forEach((f) => f(served));
  };
  const read = (url) => fetchTile(url, served !== undefined, seen);
  return {
    kind: 'url',
    onChange(listener) {
      changeListeners.push(listener);
    },
    async source(plane, options) {
      return new ol.source.VectorTile({ ...options, format: mvtFormat(ol), url: planeUrl(plane), tileLoadFunction: loadWith(read) });
    },
    async bytes(plane, z, x, y) {
      return read(planeUrl(plane).replace('{z}', String(z)).replace('{x}', String(x)).replace('{y}', String(y)));
    },
  };
}

/** Tiles out of archives: `urlOf(plane)` names the plane's archive (undefined: the plane has none, an empty map). */
async function archiveTiles(ol, urlOf) {
  const [{ PMTiles, SharedPromiseCache }, { PMTilesVectorSource }, { RangeSource, decompress }] = await Promise.all([import('pmtiles'), import('ol-pmtiles'), import('./range-source.js')]);
  const archives = new Map();
  const sources = new Map();
  const changeListeners = [];
  const metadata = new Map();
  const sourceOf = (url) => {
    if (!sources.has(url)) {
      sources.set(url, startOnce(new RangeSource(url), () => {
        metadata.delete(url);
        changeListeners.forEach((f) => f(fileNameOf(url)));
      }));
    }
    return sources.get(url);
  };
  const archive = (url) => {
    // The reader decodes directories with its cache's decompress, tiles and metadata with its own.
    if (!archives.has(url)) archives.set(url, new PMTiles(sourceOf(url), new SharedPromiseCache(undefined, undefined, decompress), decompress));
    return archives.get(url);
  };
  /**
   * The archive's header; it must hold vector tiles, and a failure names the archive and why (the reader's does
   * neither). A failure is not kept (the reader would keep it for good): the plane can be asked for again, once the
   * archive is back or the host up again.
   */
  const headerOf = async (url) => {
    let header;
    try {
      header = await archive(url).getHeader();
    } catch (err) {
      archives.delete(url);
      sources.delete(url);
      throw new Error(`${url}: ${await whyUnreadable(url, err)}`);
    }
    if (header.tileType !== PMTILES_MVT) {
      throw new Error(`${url} holds tiles of PMTiles type ${header.tileType}, not vector tiles (MVT, type 1): open the pyramid's PBF archive or its tileset.json`);
    }
    return header;
  };
  /** The archive's metadata, read once (the reader reads it anew at each call); a failure is not kept. */
  const metadataOf = (url) => {
    if (!metadata.has(url)) {
      const read = archive(url).getMetadata();
      metadata.set(url, read);
      read.catch(() => metadata.get(url) === read && metadata.delete(url));
    }
    return metadata.get(url);
  };
  return {
    kind: 'archive',
    archive,
    headerOf,
    metadataOf,
    /** Calls `listener(name)` when an archive is found replaced (another ETag) since it was first read. */
    onChange(listener) {
      changeListeners.push(listener);
    },
    async source(plane, options) {
      const url = urlOf(plane);
      if (url === undefined) return new ol.source.VectorTile({ ...options, format: mvtFormat(ol), tileUrlFunction: () => undefined });
      // Read here first, so that an archive that cannot be read fails this call with its reason.
      await headerOf(url);
      // A folder's archive names itself in its metadata: one under another's name (swapped) holds another plane's tiles.
      const written = writtenAsOther(await metadataOf(url).catch(() => undefined), url);
      if (written !== undefined) {
        throw new Error(`${url} holds the tiles of ${written}, the name it was written under (archives renamed or swapped): mudm-tiles verify names them`);
      }
      // ol-pmtiles makes a reader of its own for `url`: given the archive's source, its header read is answered from
      // the bytes already fetched, not asked of the host again.
      const source = new PMTilesVectorSource({ ...options, url: sourceOf(url), extent: options.tileGrid.getExtent(), format: mvtFormat(ol) });
      // The source reads the header and is 'loading' until then; a map does not wait for a source to be ready before
      // it calls a render complete, so the source is handed over ready.
      await new Promise((resolve) => {
        const ready = () => source.getState() === 'ready' && (source.un('change', ready), resolve());
        if (!ready()) source.on('change', ready);
      });
      // Tiles are read by this module's reader of the archive (its header already read), failures reported.
      const reader = archive(url);
      source.setTileLoadFunction(loadWith(async (src) => {
        const [z, x, y] = src.slice('pmtiles://'.length).split('/').map(Number);
        const tile = await reader.getZxy(z, x, y);
        return tile ? tile.data : null;
      }));
      return source;
    },
    async bytes(plane, z, x, y) {
      const url = urlOf(plane);
      const tile = url === undefined ? undefined : await archive(url).getZxy(z, x, y);
      return tile ? tile.data : null;
    },
  };
}

/** A PMTiles header's size: an archive is at least this long. */
const HEADER_BYTES = 127;
/** What a browser says of a request it refused (REFUSED: the likely reasons). */
const UNREACHABLE = /^(Failed to fetch|NetworkError|Load failed)/;

/**
 * Why an archive's start could not be read, as a person can act on it: the reader's message ("non-matching ETag" for
 * the 416 of an empty file, a DataView error for a short one) with the archive's size when that explains it.
 */
async function whyUnreadable(url, err) {
  const message = messageOf(err);
  if (UNREACHABLE.test(message)) return `${message} ${REFUSED}`;
  // The reader's words for a file too short for a header, or not an archive: its size tells which. Other failures
  // (an HTTP status, bytes that do not decode) are said as they are, no more asked of the host.
  const notArchive = /Wrong magic number/.test(message);
  if (!notArchive && !(err instanceof RangeError) && !/non-matching ETag|Missing content-length/.test(message)) return message;
  const r = await head(url);
  const size = r?.ok ? Number(r.headers.get('Content-Length') ?? NaN) : NaN;
  if (size < HEADER_BYTES) return `it holds ${size} bytes, fewer than the ${HEADER_BYTES} of a PMTiles header: not an archive, or cut short`;
  // The reader's words: "Wrong magic number for PMTiles archive".
  if (notArchive) return 'it does not begin as a PMTiles archive does (the bytes "PMTiles" and the version, 3): not an archive (a web page a host sent for it?), or damaged';
  return message;
}

/** The archive's headers now (a HEAD without the cache), or undefined when the request fails. */
function head(url) {
  return fetch(url, { method: 'HEAD', cache: 'no-store' }).catch(() => undefined);
}

/**
 * A PMTiles source whose first bytes (header and root directory, read by every reader of the archive) are fetched once
 * for two readers: this module's and the one ol-pmtiles makes. Fetched bytes serve one more read at offset 0, then
 * are forgotten, as they are when any read fails: a reader that finds the archive changed (another ETag) reads the
 * start anew, and `changed()` is called. Other ranges go to `inner` (a RangeSource: its `headEtag` says the ETag now).
 */
function startOnce(inner, changed) {
  let start;
  // The ETag of the archive's first read: the reader reads the start anew when it finds another, a new archive.
  let first;
  return {
    getKey: () => inner.getKey(),
    getBytes(offset, length, signal, etag) {
      if (offset !== 0) {
        return inner.getBytes(offset, length, signal, etag).then((got) => {
          // The reader takes what a 206 brings: fewer bytes than a directory or tile spans are its first part only.
          if (got.data.byteLength < length) {
            throw new Error(`bytes ${offset}–${offset + length - 1} asked, ${got.data.byteLength} sent: the archive ends before its directories say (cut short?)`);
          }
          return got;
        }).catch(async (err) => {
          start = undefined;
          // The reader calls a 416 (a range starting past the end of the file) a "non-matching ETag" too: when the
          // archive has no ETag, or still the one the reader knows, that is what it was.
          if (err && /non-matching ETag/.test(err.message) && (etag === undefined || (await inner.headEtag()) === etag)) {
            // Unchanged: the browser's cache stays good for the reads to come.
            inner.mustReload = false;
            throw new Error(`bytes ${offset}–${offset + length - 1} lie past the end of the archive (HTTP 416): it ends before its directories say (cut short?)`);
          }
          throw err;
        });
      }
      if (start !== undefined) {
        const kept = start;
        start = undefined;
        return kept;
      }
      // Not aborted by this reader's signal: the other reader may take the same bytes.
      const fetched = inner.getBytes(offset, length, undefined, etag);
      start = fetched;
      fetched.then((got) => {
        if (got.etag === undefined) return;
        if (first !== undefined && got.etag !== first) changed();
        first = got.etag;
      }, () => {
        if (start === fetched) start = undefined;
      });
      return fetched;
    },
  };
}

/** The last segment of a URL's path, decoded: an archive's file name. */
function fileNameOf(url) {
  return safeDecode(new URL(url).pathname.split('/').pop());
}

/** The archive a folder archive's metadata says it was written as, where `url` gives it another name; else undefined. */
function writtenAsOther(metadata, url) {
  const written = metadata?.archive?.href;
  return typeof written === 'string' && written !== fileNameOf(url) ? written : undefined;
}

/** Percent-decoded text, or the text as it is where it does not decode. */
export function safeDecode(text) {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * What to call a pyramid without a name: its folder or archive as the URL names it, decoded (`my slide #1.pmtiles`);
 * one archive of a folder (`member`) by the folder; at the root, the folder or archive `serve` names
 * (`serve slide.pmtiles`), else the host.
 */
export function nameOf(url, servedName, member) {
  const u = new URL(url);
  const parts = u.pathname.replace(/\/tileset\.json$/, '').split('/').filter((p) => p !== '');
  if (member) parts.pop();
  const last = parts.pop();
  return last === undefined ? servedName ?? u.host : safeDecode(last);
}

/**
 * Opens what `url` names: a PMTiles archive, a tileset.json (whose archives are used when it lists any), or the
 * folder of one (`?tileset=slide` or `slide/`, as serve, inspect and verify take OUT: descriptor.js).
 * Resolves to the descriptor, the plane dimensions of its tile paths, `tiles`: `source(plane, options)` makes
 * an OpenLayers source of a plane (options: projection, tileGrid, …), `bytes(plane, z, x, y)` reads one tile, and
 * `plane`: the plane of an archive opened directly that is one of a folder's (else undefined), and `servedName`: the
 * folder or archive `serve` serves (its `X-Pyramid-Name`), when the descriptor came from there; `url`, what was opened.
 */
export async function openPyramid(ol, url) {
  let descriptor, tiles, plane, served;
  // Which archive holds a plane: for an archive opened directly, that one, unless its metadata lists it (below).
  let route = () => url;
  if (isArchiveUrl(url)) {
    tiles = await archiveTiles(ol, (p) => route(p));
    await tiles.headerOf(url);
    descriptor = await tiles.metadataOf(url).catch((err) => {
      throw new Error(`${url}: ${messageOf(err)}`);
    });
  } else {
    ({ url, descriptor, served } = await readDescriptor(url));
  }
  if (descriptor === null || typeof descriptor !== 'object') throw new Error(`${url}: the descriptor is not a JSON object: this is not a mudm-tiles pyramid`);
  if (!Array.isArray(descriptor.tiles) || typeof descriptor.tiles[0] !== 'string') throw new Error(`${url}: the descriptor has no tiles template: this is not a mudm-tiles pyramid (an archive written by another tool carries no tileset descriptor)`);
  // Without {zlvl}, a first {z} is the zoom (the spec's 2D example {z}/{x}/{y}), not the z plane.
  const template = descriptor.tiles[0].includes('{zlvl}') ? descriptor.tiles[0] : descriptor.tiles[0].replace('{z}', '{zlvl}');
  const dims = [...template.matchAll(/\{([a-z]+)\}/g)].map((m) => m[1]).filter((n) => PLANE_DIMS.includes(n));
  if (/\.json([?#]|$)/.test(template)) {
    // An overview (0/0/0.json) names the JSON tiles of a pyramid that may have PBF twins: its tileset.json says.
    throw new Error(`${url}: this descriptor names JSON tiles only, and the viewer draws PBF tiles: open the pyramid's tileset.json, which names its PBF tiles when it has them; a pyramid of JSON tiles only needs a build with --format json,pbf (or pbf)`);
  }
  const listed = archiveAssets(descriptor, url);
  const archiveOf = (p) => listed.find((a) => dims.every((d) => a.plane[d] === undefined || a.plane[d] === p[d]))?.url;
  if (!tiles) {
    const resolved = resolveTemplate(template, url);
    // Tiles from serve itself (not from a host a --base-url names, whose empty tiles may be 404s).
    const fromServe = served !== undefined && new URL(resolved.replace(/\{[a-z]+\}/g, '0')).origin === new URL(url).origin;
    tiles = listed.length > 0 ? await archiveTiles(ol, archiveOf) : urlTiles(ol, resolved, fromServe ? safeDecode(served) : undefined);
  } else {
    // One of a folder's archives (its metadata is the folder's descriptor, listing them all): its own plane first,
    // the other planes from the archives beside it, as through the folder's tileset.json.
    // Renamed (its metadata names the archive it was written as): its plane is not the one its name would say.
    const written = writtenAsOther(descriptor, url);
    if (written !== undefined) {
      throw new Error(`${url} was written as ${written}, one archive of a folder build, and renamed: open the folder's tileset.json, or this archive under its own name beside the others`);
    }
    const own = listed.find((a) => a.url === url);
    if (own) {
      plane = own.plane;
      route = archiveOf;
    }
  }
  return { descriptor, dims, tiles, plane, servedName: served && safeDecode(served), url };
}
