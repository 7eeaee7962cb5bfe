// Where the viewer's tiles come from: the URLs of the descriptor's `tiles` template, or PMTiles archives read by HTTP
// range requests (ol-pmtiles), so that a pyramid on any static host with range support opens without a tile server.
//
// An archive is opened directly (`?tileset=slide.pmtiles`: its metadata is the descriptor), or through a tileset.json
// whose `assets` list one archive per plane and format (role `tiles`, media type `application/vnd.pmtiles`, `format`,
// the plane's `t`/`c`/`z`). Either way the map is in pixel space: the archive header's lon/lat bounds are ignored.

import { PLANE_DIMS } from './state.js';

const PMTILES_MEDIA_TYPE = 'application/vnd.pmtiles';

/** Whether a URL names a PMTiles archive: by the name its path ends with, whatever its query (a signed URL). */
const isArchiveUrl = (url) => new URL(url).pathname.toLowerCase().endsWith('.pmtiles');

/** Resolves a URL template against a base without percent-encoding its {placeholders}. */
function resolveTemplate(template, base) {
  return new URL(template, base).href.replace(/%7B/gi, '{').replace(/%7D/gi, '}');
}

/** The PBF archives a descriptor lists, each with its absolute URL and plane. */
function archiveAssets(descriptor, base) {
  return (descriptor.assets ?? [])
    .filter((a) => a && a.role === 'tiles' && a.media_type === PMTILES_MEDIA_TYPE && a.format === 'pbf' && typeof a.href === 'string')
    .map((a) => ({ url: new URL(a.href, base).href, plane: Object.fromEntries(PLANE_DIMS.filter((d) => Number.isInteger(a[d])).map((d) => [d, a[d]])) }));
}

/** Tiles by URL: the template with the plane filled in and {zlvl} renamed to OpenLayers' {z}. */
function urlTiles(ol, template) {
  const planeUrl = (plane) => template.replace(/\{([a-z]+)\}/g, (m, name) => (name === 'zlvl' ? '{z}' : PLANE_DIMS.includes(name) ? String(plane[name]) : m));
  return {
    kind: 'url',
    async source(plane, options) {
      return new ol.source.VectorTile({ ...options, format: new ol.format.MVT(), url: planeUrl(plane) });
    },
    async bytes(plane, z, x, y) {
      const response = await fetch(planeUrl(plane).replace('{z}', String(z)).replace('{x}', String(x)).replace('{y}', String(y)));
      // Empty tiles are not written: 204 from `serve`, 404 from a plain static server.
      return response.status === 200 ? response.arrayBuffer() : null;
    },
  };
}

/** Tiles out of archives: `urlOf(plane)` names the plane's archive (undefined: the plane has none, an empty map). */
async function archiveTiles(ol, urlOf) {
  const [{ PMTiles }, { PMTilesVectorSource }] = await Promise.all([import('pmtiles'), import('ol-pmtiles')]);
  const archives = new Map();
  const archive = (url) => {
    if (!archives.has(url)) archives.set(url, new PMTiles(url));
    return archives.get(url);
  };
  return {
    kind: 'archive',
    archive,
    async source(plane, options) {
      const url = urlOf(plane);
      if (url === undefined) return new ol.source.VectorTile({ ...options, format: new ol.format.MVT(), tileUrlFunction: () => undefined });
      // Read here first, so that an archive that cannot be read fails this call with its reason.
      await archive(url).getHeader();
      const source = new PMTilesVectorSource({ ...options, url, extent: options.tileGrid.getExtent(), format: new ol.format.MVT() });
      // The source reads the header again and is 'loading' until then; a map does not wait for a source to be
      // ready before it calls a render complete, so the source is handed over ready.
      await new Promise((resolve) => {
        const ready = () => source.getState() === 'ready' && (source.un('change', ready), resolve());
        if (!ready()) source.on('change', ready);
      });
      return source;
    },
    async bytes(plane, z, x, y) {
      const url = urlOf(plane);
      const tile = url === undefined ? undefined : await archive(url).getZxy(z, x, y);
      return tile ? tile.data : null;
    },
  };
}

/**
 * Opens what `url` names: a PMTiles archive, or a tileset.json (whose archives are used when it lists any).
 * Resolves to the descriptor, the plane dimensions of its tile paths, and `tiles`: `source(plane, options)` makes
 * an OpenLayers source of a plane (options: projection, tileGrid, …); `bytes(plane, z, x, y)` reads one tile.
 */
export async function openPyramid(ol, url) {
  let descriptor, tiles;
  if (isArchiveUrl(url)) {
    tiles = await archiveTiles(ol, () => url);
    descriptor = await tiles.archive(url).getMetadata();
  } else {
    const response = await fetch(url);
    if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
    descriptor = await response.json();
  }
  if (!Array.isArray(descriptor.tiles) || typeof descriptor.tiles[0] !== 'string') throw new Error(`${url}: the descriptor has no tiles template`);
  // Without {zlvl}, a first {z} is the zoom (the spec's 2D example {z}/{x}/{y}), not the z plane.
  const template = descriptor.tiles[0].includes('{zlvl}') ? descriptor.tiles[0] : descriptor.tiles[0].replace('{z}', '{zlvl}');
  const dims = [...template.matchAll(/\{([a-z]+)\}/g)].map((m) => m[1]).filter((n) => PLANE_DIMS.includes(n));
  if (!tiles) {
    const listed = archiveAssets(descriptor, url);
    tiles = listed.length > 0
      ? await archiveTiles(ol, (plane) => listed.find((a) => dims.every((d) => a.plane[d] === undefined || a.plane[d] === plane[d]))?.url)
      : urlTiles(ol, resolveTemplate(template, url));
  }
  return { descriptor, dims, tiles };
}
