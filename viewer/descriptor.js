// Where the viewer's descriptor comes from: the tileset.json a URL names, or that of the folder it names, read whole.

/** What went wrong, as a line of text: an error's message, or whatever else was thrown. */
export const messageOf = (err) => (err && err.message ? err.message : String(err));

/** The likely reasons of a request the browser refused ("Failed to fetch"). */
export const REFUSED = '(the host is down, or, on another origin, does not allow this page: CORS)';

/**
 * The URLs that may hold the descriptor `url` names, in the order to ask for them. A URL ending in `/` names a folder:
 * its tileset.json alone (`slide/` → `slide/tileset.json`). One whose last segment has no extension names a folder
 * (as serve, inspect and verify take OUT): on this page's own host (serve, or the static host of the viewer and its
 * slides, where a descriptor is a file named tileset.json), its tileset.json alone; on another host, or with a query,
 * it may also name a descriptor served without an extension (an API), asked for after the folder's tileset.json, or
 * before it when the URL has a query (a signed URL). Each URL asked for in vain is a failed request in the browser's
 * console: the folder's own URL, asked for first, was one for every folder given, and for a folder that was not
 * there, asked for second, a second 404 beside the first.
 */
function descriptorUrls(url) {
  const u = new URL(url);
  if (/\.[^/]*$/.test(u.pathname)) return [url];
  const folder = new URL(u);
  folder.pathname = u.pathname.replace(/\/?$/, '/tileset.json');
  folder.search = '';
  if (u.pathname.endsWith('/')) return [folder.href];
  if (u.search) return [url, folder.href];
  return u.origin === window.location.origin ? [folder.href] : [folder.href, url];
}

/**
 * The response of the first of `urls` that answers (a web page, a folder's listing, is no answer) and its URL. A
 * URL given as it is (`urls` is `[given]`) answers whatever it answers; else, none answering, an error names `given`
 * and each URL asked for with its answer.
 */
async function fetchFirst(given, urls) {
  const answers = [];
  for (const url of urls) {
    // A request the browser refuses (another origin without CORS headers, a host down) says only "Failed to fetch".
    const response = await fetch(url).catch((err) => {
      throw new Error(`${url}: ${messageOf(err)} ${REFUSED}`);
    });
    const page = response.ok && /html/i.test(response.headers.get('Content-Type') ?? '');
    if ((urls.length === 1 && url === given) || (response.ok && !page)) return { url, response };
    answers.push(`${url} answered ${page ? 'a web page (a folder listing?)' : `HTTP ${response.status}`}`);
  }
  throw new Error(`no pyramid at ${given}: ${answers.join(', ')} (not a pyramid's folder, or its build has not finished)`);
}

/**
 * The descriptor `given` names (a tileset.json, or the folder of one), parsed, the URL it was read from, and `served`:
 * the name `serve` gives the folder or archive it serves (its `X-Pyramid-Name`), when it came from there.
 */
export async function readDescriptor(given) {
  const { url, response } = await fetchFirst(given, descriptorUrls(given));
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}${response.status === 404 ? ' (no descriptor there: not a pyramid, or its build has not finished)' : ''}`);
  const text = await response.text();
  let descriptor;
  try {
    descriptor = JSON.parse(text);
  } catch (err) {
    throw new Error(`${url}: the descriptor is not JSON (${messageOf(err)}; ${text.length} bytes: cut short, or a build still writing it?)`);
  }
  return { url, descriptor, served: response.headers.get('X-Pyramid-Name') ?? undefined };
}
