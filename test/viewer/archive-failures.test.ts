// The viewer in headless Chromium over tiles that fail while viewed, and the status line: tiles cut short or that do
// not decode, an archive missing, replaced or deleted while viewed, "retry", planes without features.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HAVE_CHROMIUM, screen, type ViewerHandle } from './page.js';
import { at, cells, consoleErrors, dir, errorsOf, page, useArchiveSite, view, VIEW } from './archive-site.js';

declare const window: { __viewer: ViewerHandle & { setPlane(v: Record<string, number>): void } };

useArchiveSite(['slide-dir', 'plane-dir', 'slide', 'gzip', 'other', 'gap']);

describe.skipIf(!HAVE_CHROMIUM)('viewer over PMTiles archives', () => {
  it('reports tiles it cannot read from an archive, in its errors and on the status line, from a static host and through serve (ETags)', async () => {
    for (const base of [at.host, at.site]) {
      await page.goto('about:blank');
      await page.goto(`${base}index.html?tileset=cut.pmtiles#${VIEW}`);
      await page.evaluate(() => window.__viewer.ready);
      await page.evaluate(() => window.__viewer.settle());
      const errors = await errorsOf();
      expect(errors.length, base).toBeGreaterThan(0);
      // A range past the end is a 416, which the range reader reports as an ETag that changed: with the archive's ETag
      // unchanged, the viewer says what it is.
      for (const e of errors) expect(e, base).toMatch(/^tile failed to load: \d+\/\d+\/\d+ \(.*lie past the end of the archive \(HTTP 416\).*\)$/);
      // With why, the last to fail: the count alone said nothing of it but in errors, out of a person's sight.
      expect(await page.locator('#status').innerText(), base).toMatch(new RegExp(`${errors.length} tile\\(s\\) failed to load \\(the last: bytes \\d+–\\d+ lie past the end of the archive \\(HTTP 416\\): it ends before its directories say \\(cut short\\?\\)\\) retry$`));
    }
    consoleErrors.splice(0, consoleErrors.length, ...consoleErrors.filter((e) => !/416/.test(e)));
  });

  it('shows no tiles, and says why, for a plane whose archive is missing: switched to, or opened at', async () => {
    const problem = /^plane c=1, z=2 cannot be shown: http:\/\/127\.0\.0\.1:\d+\/slide-missing\/tiles-c1-z2\.pbf\.pmtiles: .*404/;
    const other = cells().filter((c) => c.c === 0 && c.z === 0)[0];
    await view(`${at.host}index.html?tileset=slide-missing/tileset.json#${VIEW}&c=0&z=0`);
    expect((await page.evaluate(([x, y]) => window.__viewer.featuresAt(x, y), [other.x, other.y] as const)).map((f) => f.id)).toContain(other.id);
    await page.evaluate(() => window.__viewer.setPlane({ c: 1, z: 2 }));
    await page.evaluate(() => window.__viewer.settle());
    await screen(page, 'missing-plane-switched');
    // The plane before is gone from the map, not left under the new plane's name.
    expect(await page.evaluate(([x, y]) => window.__viewer.featuresAt(x, y), [other.x, other.y] as const)).toEqual([]);
    expect(await page.locator('#status').innerText()).toMatch(/plane c=1, z=2 cannot be shown: .*tiles-c1-z2\.pbf\.pmtiles/);
    expect(await errorsOf()).toEqual([expect.stringMatching(problem)]);
    // Opened at that plane: the page opens, with its plane selectors, and says why the map is empty.
    await view(`${at.host}index.html?tileset=slide-missing/tileset.json#${VIEW}&c=1&z=2`);
    expect(await page.locator('#plane-c option').allInnerTexts()).toEqual(['0', '1']);
    expect(await page.locator('#status').innerText()).toMatch(/plane c=1, z=2 cannot be shown/);
    // Its tiles could not be read: nothing is known of its features, so nothing is said of them.
    expect(await page.locator('#status').innerText()).not.toContain('no features');
    expect(await errorsOf()).toEqual([expect.stringMatching(problem)]);
    // The archive put back: the plane is asked for again when switched to, and shown (no reload).
    const site = path.join(dir, 'site');
    const missing = path.join(site, 'slide-missing', 'tiles-c1-z2.pbf.pmtiles');
    fs.copyFileSync(path.join(site, 'slide', 'tiles-c1-z2.pbf.pmtiles'), missing);
    try {
      await page.evaluate(() => window.__viewer.setPlane({ c: 0, z: 0 }));
      await page.evaluate(() => window.__viewer.setPlane({ c: 1, z: 2 }));
      await page.evaluate(() => window.__viewer.settle());
      const back = cells().filter((c) => c.c === 1 && c.z === 2)[0];
      expect((await page.evaluate(([x, y]) => window.__viewer.featuresAt(x, y), [back.x, back.y] as const)).map((f) => f.id)).toContain(back.id);
      expect(await page.locator('#status').innerText()).not.toMatch(/cannot be shown/);
    } finally {
      fs.rmSync(missing);
    }
    consoleErrors.splice(0, consoleErrors.length, ...consoleErrors.filter((e) => !/404/.test(e)));
  });

  it('reports tiles that arrive short or do not decode, and still opens, saying why: an archive cut inside a tile, a directory of broken tiles, damaged archives through serve', async () => {
    for (const [name, url, reason] of [
      ['cut inside a tile', `${at.host}index.html?tileset=cut-mid.pmtiles#${VIEW}`, /(asked, \d+ sent: the archive ends before its directories say|lie past the end of the archive \(HTTP 416\): it ends before its directories say) \(cut short\?\)/],
      // Before: the decoder's words alone ("Unimplemented type: 3"), or another of its errors.
      ['broken tiles', `${at.host}index.html?tileset=bad-dir/tileset.json#${VIEW}`, /\(\d+ bytes that do not decode as a vector tile \(.+\)\)$/],
      // Before: "HTTP 500" alone, serve's words in its answer left unread.
      ['cut, through serve', `${at.cutServed}#${VIEW}`, /\(http:\/\/127\.0\.0\.1:\d+\/\d+\/\d+\/\d+\.pbf: HTTP 500 \(cut\.pmtiles: bytes \d+\.\.\d+ are past the end of the archive \(\d+ bytes\)\)\)$/],
      // Before: "Failed to fetch", the browser's words for a body whose gzip does not decode.
      ['gzip damaged, through serve', `${at.badGzServed}#${VIEW}`, /\(http:\/\/127\.0\.0\.1:\d+\/\d+\/\d+\/\d+\.pbf: HTTP 200, but the tile did not arrive \(Failed to fetch\): its gzip does not decode \(the tile or its archive is damaged: mudm-tiles verify names them\), or the connection broke\)$/],
    ] as const) {
      await page.goto('about:blank');
      await page.goto(url);
      await page.evaluate(() => window.__viewer.ready);
      await page.evaluate(() => window.__viewer.settle());
      const errors = (await errorsOf()).filter((e) => e.startsWith('tile failed to load'));
      expect(errors.length, name).toBeGreaterThan(0);
      for (const e of errors) expect(e, name).toMatch(/^tile failed to load: \d+\/\d+\/\d+ \(.+\)$/);
      expect(errors.some((e) => reason.test(e)), `${name}: ${errors.join('; ')}`).toBe(true);
      expect(await errorsOf(), name).toEqual(errors);
      expect(await page.locator('#status').innerText(), name).toContain(`${errors.length} tile(s) failed to load`);
    }
    consoleErrors.splice(0, consoleErrors.length, ...consoleErrors.filter((e) => !/416|500|ERR_CONTENT_DECODING_FAILED/.test(e)));
  });

  /** The cells of plane c=1, z=2 (`now`, replacing the archive), and one of c=0, z=0 near its first (`was`): both lie in the tiles on screen. */
  const replacing = () => {
    const now = cells().filter((c) => c.c === 1 && c.z === 2);
    const was = cells().filter((c) => c.c === 0 && c.z === 0).sort((a, b) => Math.hypot(a.x - now[0].x, a.y - now[0].y) - Math.hypot(b.x - now[0].x, b.y - now[0].y))[0];
    return { now, was };
  };
  const idsAt = (c: { x: number; y: number }) => page.evaluate(([x, y]) => window.__viewer.featuresAt(x, y).map((f) => f.id), [c.x, c.y] as const);
  /** Zoom 4 over image pixel (x, y), drawn. */
  const goTo = async (x: number, y: number) => {
    await page.evaluate(([cx, cy]) => { window.__viewer.view.setZoom(4); window.__viewer.view.setCenter([cx, -cy]); }, [x, y] as const);
    await page.evaluate(() => window.__viewer.settle());
  };

  it.each([
    ['through serve (a strong ETag)', 'site', 'replaced'],
    ['on a host of weak ETags (W/"…", which the pmtiles reader drops)', 'weak', 'replaced-weak'],
  ])('says when an archive is replaced while viewed %s, and reads the new one', async (_, host, name) => {
    const file = path.join(dir, 'site', `${name}.pmtiles`);
    const { now, was } = replacing();
    // Close in (its tiles over part of the slide only), then away to tiles not read yet.
    await view(`${at[host]}index.html?tileset=${name}.pmtiles#zoom=4&x=${was.x}&y=${was.y}`);
    expect(await page.locator('#status').innerText()).not.toContain('replaced since');
    expect(await idsAt(was)).toContain(was.id);
    // Another build: the slide's plane c=1, z=2, its tiles at other offsets.
    fs.writeFileSync(file, fs.readFileSync(path.join(dir, 'site', 'slide', 'tiles-c1-z2.pbf.pmtiles')));
    const far = cells().filter((c) => c.c === 1 && c.z === 2).sort((a, b) => Math.hypot(b.x - was.x, b.y - was.y) - Math.hypot(a.x - was.x, a.y - was.y))[0];
    await goTo(far.x, far.y);
    expect(await page.locator('#status').innerText()).toContain(`${name}.pmtiles was replaced since this page opened: reload the page to see its layers and fields`);
    // Back where it was: the tiles read from the old archive are not shown again, the new archive's are.
    await goTo(was.x, was.y);
    expect(await idsAt(now[0])).toContain(now[0].id);
    expect(await idsAt(was)).not.toContain(was.id);
    expect(await errorsOf()).toEqual([]);
  });

  it('says when the archive serve serves at its root is replaced while viewed (tiles by URL), and reads the new one', async () => {
    const { now, was } = replacing();
    await view(`${at.swap}#zoom=4&x=${was.x}&y=${was.y}`);
    expect(await idsAt(was)).toContain(was.id);
    // Another build renamed over it, as a rebuild does.
    const file = path.join(dir, 'alone', 'swap.pmtiles');
    fs.copyFileSync(path.join(dir, 'other.pmtiles'), `${file}.new`);
    fs.renameSync(`${file}.new`, file);
    const far = now.sort((a, b) => Math.hypot(b.x - was.x, b.y - was.y) - Math.hypot(a.x - was.x, a.y - was.y))[0];
    await goTo(far.x, far.y);
    expect(await page.locator('#status').innerText()).toContain('swap.pmtiles was replaced since this page opened: reload the page to see its layers and fields');
    // Back where it was: the old build's tiles are read again from the new one, not left beside its tiles.
    await goTo(was.x, was.y);
    const near = cells().filter((c) => c.c === 1 && c.z === 2).sort((a, b) => Math.hypot(a.x - was.x, a.y - was.y) - Math.hypot(b.x - was.x, b.y - was.y))[0];
    expect(await idsAt(near)).toContain(near.id);
    expect(await idsAt(was)).not.toContain(was.id);
    expect(await errorsOf()).toEqual([]);
  });

  it('reads failed tiles again on "retry", once the archive is back: by URL through serve, and by ranges from a static host', async () => {
    const cell = cells().filter((c) => c.c === 0 && c.z === 0)[0];
    const cases: [string, string][] = [[`${at.flaky}#${VIEW}`, path.join(dir, 'alone', 'flaky.pmtiles')], [`${at.host}index.html?tileset=flaky.pmtiles#${VIEW}`, path.join(dir, 'site', 'flaky.pmtiles')]];
    fs.copyFileSync(path.join(dir, 'site', 'slide.pmtiles'), cases[1][1]);
    for (const [url, file] of cases) {
      await view(url);
      // Away, then tiles not read yet are asked for (zoom 0).
      fs.renameSync(file, `${file}.away`);
      await page.evaluate(() => window.__viewer.view.setZoom(0));
      await page.evaluate(() => window.__viewer.settle());
      expect(await page.locator('#status').innerText(), url).toMatch(/\d+ tile\(s\) failed to load \(the last: .*HTTP 404.*\) retry$/);
      expect(await page.evaluate(([x, y]) => window.__viewer.featuresAt(x, y), [cell.x, cell.y] as const), url).toEqual([]);
      fs.renameSync(`${file}.away`, file);
      await page.click('#retry');
      await page.evaluate(() => window.__viewer.settle());
      expect(await page.locator('#status').innerText(), url).not.toContain('failed');
      expect((await page.evaluate(([x, y]) => window.__viewer.featuresAt(x, y), [cell.x, cell.y] as const)).map((f) => f.id), url).toContain(cell.id);
    }
    consoleErrors.splice(0, consoleErrors.length, ...consoleErrors.filter((e) => !/404/.test(e)));
  });

  it('says so when no tile of the coarsest zoom holds a feature (a tile template pointing where no tile is)', async () => {
    await view(`${at.host}index.html?tileset=elsewhere/tileset.json`);
    expect(await page.locator('#status').innerText()).toContain('no features in the tiles of zoom 0 of this plane (c=0, z=0: it may hold none, another plane the data): every one empty or missing (does the tiles template point where the tiles are?)');
    // The page's own requests of the missing tiles are logged by the browser: not a fault of the viewer.
    consoleErrors.splice(0, consoleErrors.length, ...consoleErrors.filter((e) => !/404/.test(e)));
    // A sound pyramid says nothing of the kind.
    await view(`${at.host}index.html?tileset=slide-dir/tileset.json`);
    expect(await page.locator('#status').innerText()).not.toContain('no features');
  });

  it('says a plane switched to holds no features, naming it, and says nothing of one that does', async () => {
    // Opened on the empty plane: nothing tells yet whether the tiles template points where the tiles are.
    await view(`${at.host}index.html?tileset=gap/tileset.json#c=1`);
    expect(await page.locator('#status').innerText()).toContain('no features in the tiles of zoom 0 of this plane (c=1: it may hold none, another plane the data)');
    await view(`${at.host}index.html?tileset=gap/tileset.json#c=0`);
    expect(await page.locator('#status').innerText()).not.toContain('no features');
    // Switched to from a plane that showed its cells: the template is sound, the plane holds none, and no more is said
    // (it asked whether the template pointed where the tiles are).
    await page.evaluate(() => window.__viewer.setPlane({ c: 1 }));
    await expect.poll(() => page.locator('#status').innerText()).toContain('no features on plane c=1: its tiles are empty (other planes hold the data)');
    expect(await page.locator('#status').innerText()).not.toContain('template');
    await page.evaluate(() => window.__viewer.setPlane({ c: 2 }));
    await expect.poll(() => page.locator('#status').innerText()).not.toContain('no features');
    consoleErrors.splice(0, consoleErrors.length, ...consoleErrors.filter((e) => !/404/.test(e)));
  });

  it('counts tiles as failed, not empty, once the archive serve serves is deleted while viewed', async () => {
    await view(`${at.gone}#${VIEW}`);
    expect(await errorsOf()).toEqual([]);
    fs.rmSync(path.join(dir, 'alone', 'gone.pmtiles'));
    await page.evaluate(() => window.__viewer.view.setZoom(0));
    await page.evaluate(() => window.__viewer.settle());
    const errors = await errorsOf();
    expect(errors.length).toBeGreaterThan(0);
    for (const e of errors) expect(e).toMatch(/^tile failed to load: 0\/\d+\/\d+ \(.*HTTP 404 \(from serve: not a tile of this pyramid, or its archive is gone\)\)$/);
    expect(await page.locator('#status').innerText()).toContain(`${errors.length} tile(s) failed to load`);
    consoleErrors.splice(0, consoleErrors.length, ...consoleErrors.filter((e) => !/404/.test(e)));
  });

  it('counts the failed tiles of the plane shown: switched to a sound plane, the count of the one before is gone', async () => {
    await view(`${at.host}index.html?tileset=slide-cut/tileset.json#${VIEW}&c=0&z=0`);
    expect(await page.locator('#status').innerText()).toMatch(/\d+ tile\(s\) failed to load/);
    const before = (await errorsOf()).length;
    expect(before).toBeGreaterThan(0);
    await page.evaluate(() => window.__viewer.setPlane({ c: 1, z: 2 }));
    await page.evaluate(() => window.__viewer.settle());
    expect(await page.locator('#status').innerText()).not.toContain('failed to load');
    expect(await page.locator('#status').getAttribute('class')).toBe('');
    // Every failure stays listed in errors, whichever plane it was of.
    expect((await errorsOf()).length).toBe(before);
    consoleErrors.splice(0, consoleErrors.length, ...consoleErrors.filter((e) => !/416/.test(e)));
  });

  it('logs no errors', () => {
    expect(consoleErrors).toEqual([]);
  });
});
