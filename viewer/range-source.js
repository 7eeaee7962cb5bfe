// An archive's bytes for the pmtiles reader: by HTTP Range, keeping weak ETags (by which a replaced archive is known),
// and decoded, saying damage as damage.

import { EtagMismatch } from 'pmtiles';

/**
 * What the reader's own FetchSource does (one range a request, a 416 at the start of a small file asked again whole,
 * a 200 of the whole file refused, here once asked again past the browser's cache), but a weak ETag (`W/"…"`) is kept
 * and compared, not dropped: static hosts on Node (Express's serve-static, sirv, vite) send only those, and an archive
 * replaced there while viewed was read with the old archive's directories (tiles that failed to decode, or ranges
 * past its end).
 */
export class RangeSource {
  constructor(url) {
    this.url = url;
    /** After a change: past the browser's cache, whose ranges may be of the archive before. */
    this.mustReload = false;
    /** A host whose weak ETags differ from range to range of one file (hashes of each body): they say nothing. */
    this.weakPerRange = false;
    /** The file's ETag by HEAD when ranges came with weak ones (null: none given), asked once. */
    this.fileEtag = undefined;
    // The reader's own workaround: Chromium on Windows mixes ranges of a cached file up.
    const agent = globalThis.navigator?.userAgent ?? '';
    this.noStore = agent.includes('Windows') && /Chrome|Chromium|Edg|OPR|Brave/.test(agent);
  }

  getKey() {
    return this.url;
  }

  async getBytes(offset, length, signal, etag) {
    const headers = new Headers({ range: `bytes=${offset}-${offset + length - 1}` });
    const cache = this.mustReload ? 'reload' : this.noStore ? 'no-store' : undefined;
    // Its own controller too: a host that ignores Range sends the whole archive, which is not read on.
    const controller = new AbortController();
    signal?.addEventListener('abort', () => controller.abort(signal.reason), { once: true });
    let response = await fetch(this.url, { signal: controller.signal, cache, headers });
    if (offset === 0 && response.status === 416) {
      // The first read asks for more than a small archive holds: asked again for what it holds.
      const range = response.headers.get('Content-Range');
      if (!range || !range.startsWith('bytes */')) throw new Error('Missing content-length on 416 response');
      headers.set('range', `bytes=0-${Number(range.slice(8)) - 1}`);
      response = await fetch(this.url, { signal: controller.signal, cache: 'reload', headers });
    } else if (cache === undefined && sentWhole(response, length)) {
      // A cache between (the browser's, a proxy's) may ask for a range with If-Range and the validator it holds: for a
      // file replaced since, the host rightly sends the whole new file (200; seen once after a rebuild, not
      // reproduced). Asked again past the cache, before blaming the host.
      // The body is cancelled, not the controller aborted: the second request goes by it.
      await response.body?.cancel();
      response = await fetch(this.url, { signal: controller.signal, cache: 'reload', headers });
    }
    let got = response.headers.get('ETag') ?? undefined;
    if (this.weakPerRange && got?.startsWith('W/')) got = undefined;
    // A weak ETag may be the file's (size and time) or each range's (a hash of the body): the file's own, asked once,
    // tells them apart when a range's differs.
    if (got?.startsWith('W/') && this.fileEtag === undefined) this.fileEtag = (await this.headEtag()) ?? null;
    if (etag !== undefined && got !== undefined && got !== etag && got.startsWith('W/') && this.fileEtag !== null && (await this.headEtag()) === this.fileEtag) {
      // The file's ETag is still the one first seen: this host's weak ETags are of each range, not of the file.
      this.weakPerRange = true;
      got = undefined;
    }
    if (response.status === 416) {
      this.mustReload = true;
      throw new EtagMismatch(`Server returned non-matching ETag ${etag}: HTTP 416, a range past the end`);
    }
    if (etag !== undefined && got !== undefined && got !== etag) {
      this.mustReload = true;
      throw new EtagMismatch(`Server returned non-matching ETag ${etag} (now ${got})`);
    }
    // The reader's own words were "Bad response code: 404".
    if (response.status >= 300) throw new Error(`HTTP ${response.status}${response.status === 404 ? ' (no such file on the host: not copied there, moved, or misnamed)' : ''}`);
    if (sentWhole(response, length)) {
      controller.abort();
      const size = response.headers.get('Content-Length');
      // The reader's own words ("Check that your storage backend supports HTTP Byte Serving") named neither the
      // host's fault nor a way out.
      const whole = size ? ` (${size} bytes)` : '';
      throw new Error(`the host sent the whole file${whole} for a range of ${length}: it does not answer HTTP Range requests, by which archives are read (Python's http.server does not); host the archive where they are answered (nginx, Apache, Caddy, an object store) or with mudm-tiles serve`);
    }
    return {
      data: await response.arrayBuffer(), etag: this.weakPerRange ? undefined : got,
      cacheControl: response.headers.get('Cache-Control') ?? undefined, expires: response.headers.get('Expires') ?? undefined,
    };
  }

  /** The file's ETag now (a HEAD past the cache), or undefined when the host gives none or cannot be reached. */
  async headEtag() {
    try {
      return (await fetch(this.url, { method: 'HEAD', cache: 'no-store' })).headers.get('ETag') ?? undefined;
    } catch {
      return undefined;
    }
  }
}

/** Whether a response is the whole file for a range of `length` bytes: a 200 of more bytes, or of a size not said. */
function sentWhole(response, length) {
  const size = response.headers.get('Content-Length');
  return response.status === 200 && (!size || Number(size) > length);
}

/** PMTiles' compression codes the viewer reads: none (0: unknown, taken as none, as the reader does; 1), gzip (2). */
const UNCOMPRESSED = [0, 1];
const GZIP = 2;

/**
 * Bytes of an archive (a directory, its metadata, a tile) decoded as its header says, as the reader does; bytes that
 * do not decode are said to be damage. The browser's own words for them were "Failed to fetch", which the viewer then
 * took for a host down or refusing the page (CORS).
 */
export async function decompress(bytes, compression) {
  if (UNCOMPRESSED.includes(compression)) return bytes;
  if (compression !== GZIP) throw new Error(`compression ${compression} of PMTiles (3: Brotli, 4: Zstandard) is not read by the viewer, only gzip (2) and none (1)`);
  try {
    return await new Response(new Response(bytes).body.pipeThrough(new DecompressionStream('gzip'))).arrayBuffer();
  } catch {
    throw new Error(`${bytes.byteLength} bytes that do not decode as gzip, which the archive's header says they are: the archive is damaged (mudm-tiles verify names the parts)`);
  }
}
