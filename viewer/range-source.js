// An archive's bytes by HTTP Range for the pmtiles reader, keeping weak ETags, by which a replaced archive is known.

import { EtagMismatch } from 'pmtiles';

/**
 * What the reader's own FetchSource does (one range a request, a 416 at the start of a small file asked again whole,
 * a 200 of the whole file refused), but a weak ETag (`W/"…"`) is kept and compared, not dropped: static hosts on
 * Node (Express's serve-static, sirv, vite) send only those, and an archive replaced there while viewed was read
 * with the old archive's directories (tiles that failed to decode, or ranges past its end).
 */
export class RangeSource {
  constructor(url) {
    this.url = url;
    /** After a change: past the browser's cache, whose ranges may be of the archive before. */
    this.mustReload = false;
  }

  getKey() {
    return this.url;
  }

  async getBytes(offset, length, signal, etag) {
    const headers = new Headers({ range: `bytes=${offset}-${offset + length - 1}` });
    const cache = this.mustReload ? 'reload' : undefined;
    let response = await fetch(this.url, { signal, cache, headers });
    if (offset === 0 && response.status === 416) {
      // The first read asks for more than a small archive holds: asked again for what it holds.
      const range = response.headers.get('Content-Range');
      if (!range || !range.startsWith('bytes */')) throw new Error('Missing content-length on 416 response');
      headers.set('range', `bytes=0-${Number(range.slice(8)) - 1}`);
      response = await fetch(this.url, { signal, cache: 'reload', headers });
    }
    const got = response.headers.get('ETag') ?? undefined;
    if (response.status === 416 || (etag !== undefined && got !== undefined && got !== etag)) {
      this.mustReload = true;
      throw new EtagMismatch(`Server returned non-matching ETag ${etag} (now ${got}) or HTTP ${response.status}`);
    }
    if (response.status >= 300) throw new Error(`Bad response code: ${response.status}`);
    const size = response.headers.get('Content-Length');
    if (response.status === 200 && (!size || Number(size) > length)) {
      throw new Error('Server returned no content-length header or content-length exceeding request. Check that your storage backend supports HTTP Byte Serving.');
    }
    return {
      data: await response.arrayBuffer(), etag: got,
      cacheControl: response.headers.get('Cache-Control') ?? undefined, expires: response.headers.get('Expires') ?? undefined,
    };
  }
}
