// The viewer in headless Chromium refusing what it cannot show, saying why: archives damaged, swapped, of JSON tiles,
// of another tool, missing or cut short; descriptors cut short or absent; hosts down or without Range.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HAVE_CHROMIUM, type ViewerHandle } from './page.js';
import { at, cells, consoleErrors, dir, errorsOf, page, useArchiveSite, view, VIEW } from './archive-site.js';

declare const window: { __viewer: ViewerHandle & { setPlane(v: Record<string, number>): void } };

useArchiveSite(['plane-dir', 'gzip', 'folder', 'json-only']);

describe.skipIf(!HAVE_CHROMIUM)('viewer over PMTiles archives', () => {
  it('shows no plane from an archive under another plane\'s name (swapped), and says which it holds', async () => {
    await view(`${at.host}index.html?tileset=swapped/tileset.json#${VIEW}&c=0&z=0`);
    const problem = /swapped\/tiles-c0-z0\.pbf\.pmtiles holds the tiles of tiles-c1-z2\.pbf\.pmtiles, the name it was written under \(archives renamed or swapped\): mudm-tiles verify names them$/;
    expect(await page.locator('#status').innerText()).toMatch(/plane c=0, z=0 cannot be shown: /);
    expect(await page.locator('#status').innerText()).toMatch(problem);
    expect(await errorsOf()).toEqual([expect.stringMatching(problem)]);
    // One archive of a folder opened directly under another name: not shown as the plane its place would say.
    await page.goto('about:blank');
    await page.goto(`${at.host}index.html?tileset=renamed.pmtiles`);
    const renamed = await page.evaluate(() => window.__viewer.ready.then(() => 'ready', (e: Error) => e.message));
    expect(renamed).toBe(`${at.host}renamed.pmtiles was written as tiles-c1-z2.pbf.pmtiles, one archive of a folder build, and renamed: open the folder's tileset.json, or this archive under its own name beside the others`);
    await view(`${at.host}index.html?tileset=swapped/tileset.json#${VIEW}&c=0&z=0`);
    // Another plane, whose archive is its own, is shown.
    await page.evaluate(() => window.__viewer.setPlane({ c: 1, z: 1 }));
    await page.evaluate(() => window.__viewer.settle());
    const cell = cells().filter((c) => c.c === 1 && c.z === 1)[0];
    expect((await page.evaluate(([x, y]) => window.__viewer.featuresAt(x, y), [cell.x, cell.y] as const)).map((f) => f.id)).toContain(cell.id);
  });

  it('refuses an archive of JSON tiles with a message saying so, once, and what to open instead', async () => {
    await page.goto('about:blank');
    await page.goto(`${at.host}index.html?tileset=folder/tiles-c0-z0.json.pmtiles`);
    const failure = await page.evaluate(() => window.__viewer.ready.then(() => 'ready', (e: Error) => e.message));
    expect(failure).toMatch(/tiles-c0-z0\.json\.pmtiles holds tiles of PMTiles type 0, not vector tiles \(MVT, type 1\): open the pyramid's PBF archive or its tileset\.json$/);
    expect(await page.locator('#status').innerText()).toBe(`cannot show this pyramid: ${failure}`);
    expect(await errorsOf()).toEqual([failure]);
    // The title and the reason; no controls with nothing to act on.
    for (const id of ['fit', 'field', 'layers', 'legend']) expect(await page.locator(`#${id}`).isVisible(), id).toBe(false);
    expect(await page.locator('#title').isVisible()).toBe(true);
  });

  it('says a pyramid of JSON tiles only is not one it draws', async () => {
    await page.goto('about:blank');
    await page.goto(`${at.host}index.html?tileset=json-only/tileset.json`);
    const failure = await page.evaluate(() => window.__viewer.ready.then(() => 'ready', (e: Error) => e.message));
    expect(failure).toMatch(/json-only\/tileset\.json: this descriptor names JSON tiles only, and the viewer draws PBF tiles: open the pyramid's tileset\.json, which names its PBF tiles when it has them; a pyramid of JSON tiles only needs a build with --format json,pbf \(or pbf\)$/);
    expect(await errorsOf()).toEqual([failure]);
  });

  it('says a descriptor cut short is not JSON, naming it and its size', async () => {
    const site = path.join(dir, 'site');
    fs.mkdirSync(path.join(site, 'cut'), { recursive: true });
    fs.writeFileSync(path.join(site, 'cut', 'tileset.json'), '{"tilejson": "3.0.0", "tiles": ["{zlvl}/{x}/{y}.pbf"');
    await page.goto('about:blank');
    await page.goto(`${at.host}index.html?tileset=cut/tileset.json`);
    const failure = await page.evaluate(() => window.__viewer.ready.then(() => 'ready', (e: Error) => e.message));
    expect(failure).toMatch(/^http:\/\/[^ ]+\/cut\/tileset\.json: the descriptor is not JSON \(.+; 52 bytes: cut short, or a build still writing it\?\)$/);
    expect(await page.locator('#status').innerText()).toBe(`cannot show this pyramid: ${failure}`);
  });

  it('says an archive another tool wrote is not a mudm-tiles pyramid', async () => {
    await page.goto('about:blank');
    await page.goto(`${at.host}index.html?tileset=foreign.pmtiles`);
    const failure = await page.evaluate(() => window.__viewer.ready.then(() => 'ready', (e: Error) => e.message));
    expect(failure).toBe(`${at.host}foreign.pmtiles: the descriptor has no tiles template: this is not a mudm-tiles pyramid (an archive written by another tool carries no tileset descriptor)`);
    expect(await errorsOf()).toEqual([failure]);
  });

  it('says a folder without a descriptor is not a pyramid, or not built yet', async () => {
    await page.goto('about:blank');
    await page.goto(`${at.host}index.html?tileset=unbuilt/tileset.json`);
    const failure = await page.evaluate(() => window.__viewer.ready.then(() => 'ready', (e: Error) => e.message));
    expect(failure).toBe(`${at.host}unbuilt/tileset.json: HTTP 404 (no descriptor there: not a pyramid, or its build has not finished)`);
    // A folder on the page's own host, with or without its slash: its tileset.json alone is asked for, and named. Before,
    // `unbuilt` was asked for too: two 404s in the browser's console, and both URLs in the message.
    for (const [base, given] of [[at.host, 'unbuilt/'], [at.host, 'unbuilt'], [at.site, 'unbuilt'], [at.site, 'nowhere']]) {
      const logged = consoleErrors.length;
      await page.goto('about:blank');
      await page.goto(`${base}index.html?tileset=${given}`);
      expect(await page.evaluate(() => window.__viewer.ready.then(() => 'ready', (e: Error) => e.message))).toBe(`no pyramid at ${base}${given}: ${base}${given.replace(/\/$/, '')}/tileset.json answered HTTP 404 (not a pyramid's folder, or its build has not finished)`);
      expect(await page.locator('#status').innerText()).toBe(`cannot show this pyramid: no pyramid at ${base}${given}: ${base}${given.replace(/\/$/, '')}/tileset.json answered HTTP 404 (not a pyramid's folder, or its build has not finished)`);
      // The one request's 404, which the browser logs whatever the page does.
      expect(consoleErrors.slice(logged), `${base}${given}`).toEqual([expect.stringMatching(/404/)]);
    }
    consoleErrors.splice(0, consoleErrors.length, ...consoleErrors.filter((e) => !/404/.test(e)));
  });

  it('says a host that sends the whole archive for a range does not answer Range requests, and where to host it', async () => {
    await page.goto('about:blank');
    await page.goto(`${at.noRanges}index.html?tileset=slide.pmtiles`);
    const failure = await page.evaluate(() => window.__viewer.ready.then(() => 'ready', (e: Error) => e.message));
    // Before: the pmtiles reader's "Server returned no content-length header or content-length exceeding request.
    // Check that your storage backend supports HTTP Byte Serving."
    const size = fs.statSync(path.join(dir, 'site', 'slide.pmtiles')).size;
    expect(failure).toBe(`${at.noRanges}slide.pmtiles: the host sent the whole file (${size} bytes) for a range of 16384: it does not answer HTTP Range requests, by which archives are read (Python's http.server does not); host the archive where they are answered (nginx, Apache, Caddy, an object store) or with mudm-tiles serve`);
    expect(await page.locator('#status').innerText()).toBe(`cannot show this pyramid: ${failure}`);
  });

  it('names an archive it cannot find', async () => {
    for (const base of [at.host, at.site]) {
      const logged = consoleErrors.length;
      await page.goto('about:blank');
      await page.goto(`${base}index.html?tileset=nowhere.pmtiles`);
      const failure = await page.evaluate(() => window.__viewer.ready.then(() => 'ready', (e: Error) => e.message));
      // Before: "Bad response code: 404", the reader's words, after a HEAD asked for its size: a second 404.
      expect(failure).toBe(`${base}nowhere.pmtiles: HTTP 404 (no such file on the host: not copied there, moved, or misnamed)`);
      expect(await errorsOf()).toEqual([failure]);
      expect(consoleErrors.slice(logged), base).toEqual([expect.stringMatching(/404/)]);
    }
    // Shorter than a header: the reader's own words (a "non-matching ETag" for the 416 of an empty file, a DataView
    // error) would not say it.
    for (const [name, bytes] of [['empty', 0], ['short', 50]] as const) {
      await page.goto('about:blank');
      await page.goto(`${at.host}index.html?tileset=${name}.pmtiles`);
      const why = await page.evaluate(() => window.__viewer.ready.then(() => 'ready', (e: Error) => e.message));
      expect(why).toBe(`${at.host}${name}.pmtiles: it holds ${bytes} bytes, fewer than the 127 of a PMTiles header: not an archive, or cut short`);
    }
    // The page's own request of the missing file is logged by the browser: not a fault of the viewer.
    consoleErrors.splice(0, consoleErrors.length, ...consoleErrors.filter((e) => !/404|416/.test(e)));
  });

  it('says an archive whose gzipped parts do not decode is damaged, and a file that is no archive is none', async () => {
    const damaged = 'that do not decode as gzip, which the archive\'s header says they are: the archive is damaged (mudm-tiles verify names the parts)';
    // Before: "Failed to fetch (the host is down, or, on another origin, does not allow this page: CORS)", the browser's
    // words for a stream that does not decode, and "Failed to fetch" for the metadata.
    for (const [name, part] of [['bad-root', 8], ['bad-meta', 24]] as const) {
      await page.goto('about:blank');
      await page.goto(`${at.host}index.html?tileset=${name}.pmtiles`);
      const failure = await page.evaluate(() => window.__viewer.ready.then(() => 'ready', (e: Error) => e.message));
      const length = Number(fs.readFileSync(path.join(dir, 'site', `${name}.pmtiles`)).readBigUInt64LE(part + 8));
      expect(failure, name).toBe(`${at.host}${name}.pmtiles: ${length} bytes ${damaged}`);
    }
    // Its tiles: each fails for that reason, and the status line says it.
    await view(`${at.host}index.html?tileset=bad-gz-tiles.pmtiles#${VIEW}`);
    const errors = await errorsOf();
    expect(errors.length).toBeGreaterThan(0);
    for (const e of errors) expect(e).toMatch(new RegExp(`^tile failed to load: \\d+/\\d+/\\d+ \\(\\d+ bytes ${damaged.replace(/[()]/g, '\\$&')}\\)$`));
    expect(await page.locator('#status').innerText()).toMatch(new RegExp(`${errors.length} tile\\(s\\) failed to load \\(the last: \\d+ bytes ${damaged.replace(/[()]/g, '\\$&')}\\) retry$`));
    // A web page under an archive's name. Before: "Wrong magic number for PMTiles archive".
    await page.goto('about:blank');
    await page.goto(`${at.host}index.html?tileset=page.pmtiles`);
    expect(await page.evaluate(() => window.__viewer.ready.then(() => 'ready', (e: Error) => e.message))).toBe(`${at.host}page.pmtiles: it does not begin as a PMTiles archive does (the bytes "PMTiles" and the version, 3): not an archive (a web page a host sent for it?), or damaged`);
  });

  it('names a descriptor it cannot fetch (no host there), and opens the default one for an empty ?tileset=', async () => {
    // A port nothing listens on (taken, then let go).
    const port = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (probe.address() as net.AddressInfo).port;
        probe.close(() => resolve(p));
      });
    });
    await page.goto('about:blank');
    await page.goto(`${at.host}index.html?tileset=${encodeURIComponent(`http://127.0.0.1:${port}/tileset.json`)}`);
    const failure = await page.evaluate(() => window.__viewer.ready.then(() => 'ready', (e: Error) => e.message));
    expect(failure).toBe(`http://127.0.0.1:${port}/tileset.json: Failed to fetch (the host is down, or, on another origin, does not allow this page: CORS)`);
    consoleErrors.splice(0, consoleErrors.length, ...consoleErrors.filter((e) => !/ERR_CONNECTION_REFUSED/.test(e)));
    await view(`${at.planeDir}?tileset=#${VIEW}`);
    expect(await errorsOf()).toEqual([]);
    expect(await page.locator('#status').innerText()).toMatch(/^2 layer\(s\)/);
  });

  it('logs no errors', () => {
    expect(consoleErrors).toEqual([]);
  });
});
