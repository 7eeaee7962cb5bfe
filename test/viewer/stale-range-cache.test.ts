// The viewer over a host that answers a range with the whole file once, as it must when the browser's cache asks with
// If-Range and the validator of an archive since replaced: asked again past the cache, not blamed on the host.
import fs from 'node:fs';
import type { IncomingMessage } from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { fileSource } from '../../src/io/read.js';
import { buildArchive } from '../helpers/archives.js';
import { tmpDir } from '../helpers/pyramid.js';
import { copyViewer, startStaticServer, type StaticServer } from '../helpers/static-server.js';
import { HAVE_CHROMIUM, launch, openPage, type ViewerHandle } from './page.js';

declare const window: { __viewer: ViewerHandle };

const CELLS = path.resolve('sample-data/slide/cells.json');
const ARCHIVE = 'slide.pmtiles';
/** One request of the archive as the host saw it, and its answer. */
interface Seen { range: string; cacheControl: string; status: number }

let dir: string;
let server: StaticServer | undefined;
let url: string;
let browser: Browser | undefined;
let page: Page;
const errors: string[] = [];
const seen: Seen[] = [];

/**
 * Whether the host sends the whole archive for this request: for one range asked without `Cache-Control: no-cache`
 * (as the browser's cache asks), once, as a host answers an If-Range that no longer holds; ranges otherwise.
 */
function wholeOnce(): (rel: string, req: IncomingMessage) => boolean {
  let sentWhole = false;
  return (rel, req) => {
    if (path.basename(rel) !== ARCHIVE) return false;
    const cacheControl = req.headers['cache-control'] ?? '';
    const whole = !req.headers.range || (!sentWhole && !/no-cache/.test(cacheControl));
    if (req.headers.range && whole) sentWhole = true;
    seen.push({ range: req.headers.range ?? '', cacheControl, status: whole ? 200 : 206 });
    return whole;
  };
}

beforeAll(async () => {
  if (!HAVE_CHROMIUM) return;
  dir = tmpDir('mudm-stale-range');
  const site = path.join(dir, 'site');
  // Every plane's cells in one plane: an archive of some hundreds of KiB, many times the reader's first range.
  await buildArchive([{ source: fileSource(CELLS) }], { workers: 1, memoryBudget: 64 * 1024 * 1024, name: 'sample slide' }, path.join(site, ARCHIVE));
  copyViewer(site);
  server = await startStaticServer(site, { wholeFor: wholeOnce() });
  url = server.url;
  browser = await launch();
  page = await openPage(browser, errors);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!HAVE_CHROMIUM)('viewer over a host that sends an archive whole for a cached range', () => {
  it('asks again past the browser\'s cache and shows the archive, not "does not answer HTTP Range requests"', async () => {
    // A cell without a hole, and a point inside it (the mean of its star-shaped ring's vertices).
    type Feature = { id: number; geometry: { coordinates: number[][][] } };
    const cell = (JSON.parse(fs.readFileSync(CELLS, 'utf8')) as { features: Feature[] }).features.find((f) => f.geometry.coordinates.length === 1)!;
    const ring = cell.geometry.coordinates[0].slice(0, -1);
    const [x, y] = [0, 1].map((i) => ring.reduce((s, p) => s + p[i], 0) / ring.length);
    expect(fs.statSync(path.join(dir, 'site', ARCHIVE)).size).toBeGreaterThan(16384);

    await page.goto(`${url}index.html?tileset=${ARCHIVE}#zoom=2&x=${x}&y=${y}`);
    // Before: "…slide.pmtiles: the host sent the whole file (N bytes) for a range of 16384: it does not answer HTTP
    // Range requests…", the archive never shown.
    expect(await page.evaluate(() => window.__viewer.ready.then(() => 'ready', (e: Error) => e.message))).toBe('ready');
    await page.evaluate(() => window.__viewer.settle());
    expect((await page.evaluate(([px, py]) => window.__viewer.featuresAt(px, py), [x, y] as const)).map((f) => f.id)).toContain(cell.id);
    expect(await page.locator('#status').innerText()).not.toMatch(/Range|failed/);
    expect(await page.evaluate(() => window.__viewer.errors)).toEqual([]);
    expect(errors).toEqual([]);

    // The first range came whole; the same range was asked again past the cache, and answered as asked.
    expect(seen.slice(0, 2)).toEqual([
      { range: 'bytes=0-16383', cacheControl: '', status: 200 },
      { range: 'bytes=0-16383', cacheControl: 'no-cache', status: 206 },
    ]);
    expect(seen.slice(2).length).toBeGreaterThan(0);
    expect(seen.slice(2).every((s) => s.status === 206)).toBe(true);
  });
});
