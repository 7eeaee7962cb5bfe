// The viewer in headless Chromium over PMTiles archives of the sample slide: through `serve` and from a plain static
// server with Range (no mudm-tiles running), each view drawn as the directory build's view, features at their pixels.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { close, HAVE_CHROMIUM, screen, type ViewerHandle } from './page.js';
import { at, cells, consoleErrors, dir, errorsOf, page, useArchiveSite, view, VIEW, WHITE, type Cell } from './archive-site.js';

declare const window: { __viewer: ViewerHandle & { setPlane(v: Record<string, number>): void } };

useArchiveSite(['slide-dir', 'plane-dir', 'slide', 'gzip', 'folder', 'nameless run', 'my slide']);

/**
 * Ids found at each cell's point, and the screen colour there, for every third cell of a plane on screen beside the
 * panel; `name` saves the screenshot under $VIEWER_SCREENSHOTS.
 */
async function probe(plane: { c: number; z: number }, name: string): Promise<{ ids: number[][]; colours: number[][]; cells: Cell[] }> {
  const pixel = await screen(page, name);
  const panelRight = ((await page.locator('#panel').boundingBox())?.width ?? 0) + 16;
  const onPlane = cells().filter((c, i) => c.c === plane.c && c.z === plane.z && i % 3 === 0);
  // One call for all: where each point is on screen, and which features the map finds there.
  const found = await page.evaluate((points) => points.map(([x, y]) => ({
    at: window.__viewer.toScreen(x, y), ids: window.__viewer.featuresAt(x, y).map((f) => Number(f.id)).sort((a, b) => a - b),
  })), onPlane.map((c) => [c.x, c.y] as const));
  const shown: Cell[] = [];
  const ids: number[][] = [];
  const colours: number[][] = [];
  found.forEach(({ at: [sx, sy], ids: here }, i) => {
    if (sx < panelRight || sx > 990 || sy < 10 || sy > 630) return;
    shown.push(onPlane[i]);
    ids.push(here);
    colours.push(pixel(sx, sy));
  });
  return { ids, colours, cells: shown };
}

describe.skipIf(!HAVE_CHROMIUM)('viewer over PMTiles archives', () => {
  it('shows every plane of the slide from its archives, through serve and from a static host, as from the directory build', async () => {
    for (const plane of [{ c: 0, z: 0 }, { c: 1, z: 2 }]) {
      const hash = `#${VIEW}&c=${plane.c}&z=${plane.z}`;
      await view(`${at.slideDir}${hash}`);
      const want = await probe(plane, `directory-c${plane.c}-z${plane.z}`);
      // Enough cells on screen to mean something, each found at its point (the nucleus inside it too) and drawn there.
      expect(want.cells.length).toBeGreaterThan(60);
      want.cells.forEach((cell, i) => expect(want.ids[i], `cell ${cell.id}`).toContain(cell.id));
      want.colours.forEach((c, i) => expect(close(c, WHITE, 24), `cell ${want.cells[i].id} drawn`).toBe(false));
      for (const [name, url] of [['serve-archives', `${at.slideArchives}${hash}`], ['static-archives', `${at.host}index.html?tileset=slide/tileset.json${hash}`]]) {
        await view(url);
        const got = await probe(plane, `${name}-c${plane.c}-z${plane.z}`);
        expect(got.cells.map((c) => c.id), name).toEqual(want.cells.map((c) => c.id));
        expect(got.ids, name).toEqual(want.ids);
        got.colours.forEach((c, i) => expect(close(c, want.colours[i], 2), `${name}: cell ${got.cells[i].id} ${c} vs ${want.colours[i]}`).toBe(true));
        expect(await errorsOf(), name).toEqual([]);
      }
    }
  });

  it('switches planes from archive to archive on a static host', async () => {
    await view(`${at.host}index.html?tileset=slide/tileset.json#${VIEW}&c=0&z=0`);
    expect(await page.locator('#plane-c option').allInnerTexts()).toEqual(['0', '1']);
    expect(await page.locator('#plane-z option').allInnerTexts()).toEqual(['0', '1', '2']);
    await page.selectOption('#plane-z', '1');
    await page.evaluate(() => window.__viewer.settle());
    const plane = { c: 0, z: 1 };
    const got = await probe(plane, 'static-archives-switched-c0-z1');
    expect(got.cells.length).toBeGreaterThan(60);
    got.cells.forEach((cell, i) => expect(got.ids[i], `cell ${cell.id}`).toContain(cell.id));
    got.colours.forEach((c, i) => expect(close(c, WHITE, 24), `cell ${got.cells[i].id} drawn`).toBe(false));
    // A cell of the plane left is no longer there.
    const other = cells().find((c) => c.c === 0 && c.z === 0 && got.cells.every((g) => Math.hypot(g.x - c.x, g.y - c.y) > 30)) as Cell;
    expect((await page.evaluate(([x, y]) => window.__viewer.featuresAt(x, y), [other.x, other.y] as const)).map((f) => f.id)).not.toContain(other.id);
    expect(await errorsOf()).toEqual([]);
    // A hash that switches one dimension and names a plane the pyramid lacks in the other: the switch is made, and
    // the note on what it lacks stays once the new plane's tiles are in.
    await page.evaluate((v) => { location.hash = `#${v}&c=1&z=9`; }, VIEW);
    await page.waitForFunction(() => /c=1&z=1/.test(location.hash));
    await page.evaluate(() => window.__viewer.settle());
    expect(await page.locator('#status').innerText()).toContain('no plane z=9 in this pyramid (z 0–2): showing z=1');
  });

  it('shows one archive (slide.pmtiles, and gzipped) through serve, by its tile URLs and read by ranges, and from a static host, as its directory build', async () => {
    const plane = { c: 0, z: 0 };
    await view(`${at.planeDir}#${VIEW}`);
    const want = await probe(plane, 'one-plane-directory');
    expect(want.cells.length).toBeGreaterThan(60);
    want.cells.forEach((cell, i) => expect(want.ids[i], `cell ${cell.id}`).toContain(cell.id));
    want.colours.forEach((c, i) => expect(close(c, WHITE, 24), `cell ${want.cells[i].id} drawn`).toBe(false));
    for (const [name, url] of [['serve-file', `${at.planeArchive}#${VIEW}`], ['serve-file-ranges', `${at.planeArchive}?tileset=slide.pmtiles#${VIEW}`], ['static-file', `${at.host}index.html?tileset=slide.pmtiles#${VIEW}`], ['static-file-hash-in-name', `${at.host}index.html?tileset=slide%20%231.pmtiles#${VIEW}`],
      ['serve-file-gzip', `${at.planeGzip}#${VIEW}`], ['serve-file-gzip-ranges', `${at.planeGzip}?tileset=slide-gz.pmtiles#${VIEW}`],
      ['static-file-gzip', `${at.host}index.html?tileset=slide-gz.pmtiles#${VIEW}`]]) {
      // The archive's start (header and root directory) is asked of the host once, though two readers read it.
      // Nor is any other range asked twice: tiles the fit read are drawn from those bytes.
      const ranges: string[] = [];
      const onRequest = (r: { url(): string; headers(): Record<string, string> }) => {
        if (/\.pmtiles$/.test(r.url()) && r.headers().range) ranges.push(r.headers().range);
      };
      page.on('request', onRequest);
      await view(url);
      page.off('request', onRequest);
      if (url.includes('?tileset=')) {
        expect(ranges.filter((r) => r.startsWith('bytes=0-')), name).toHaveLength(1);
        expect(ranges.length, name).toBeGreaterThan(2);
        expect(ranges.filter((r, i) => ranges.indexOf(r) !== i), name).toEqual([]);
      }
      expect(await page.locator('#title').innerText(), name).toBe('sample slide');
      const got = await probe(plane, name);
      expect(got.ids, name).toEqual(want.ids);
      got.colours.forEach((c, i) => expect(close(c, want.colours[i], 2), `${name}: cell ${got.cells[i].id}`).toBe(true));
      expect(await errorsOf(), name).toEqual([]);
    }
  });

  it('calls a pyramid without a name by its archive\'s file name, decoded, from a static host and through serve', async () => {
    // '#', '?' and '%' in the file name, sent escaped in the query as a link to it is.
    await view(`${at.host}index.html?tileset=${encodeURIComponent('my slide #2 (50%?).pmtiles')}#${VIEW}`);
    expect(await page.locator('#title').innerText()).toBe('my slide #2 (50%?).pmtiles');
    expect(await page.title()).toBe('my slide #2 (50%?).pmtiles — mudm-tiles viewer');
    expect(await errorsOf()).toEqual([]);
    // Served on its own, at the root: the URL names no file, serve does.
    await view(`${at.nameless}#${VIEW}`);
    expect(await page.locator('#title').innerText()).toBe('my slide #2 (50%?).pmtiles');
    expect(await errorsOf()).toEqual([]);
  });

  it('fits the first view to the data from an archive as from the directory', async () => {
    const centre = async (url: string) => {
      await view(url);
      const got = await page.evaluate(() => [...window.__viewer.view.getCenter(), window.__viewer.zoom()]);
      await screen(page, `fit-${url.includes('?') ? 'static' : 'directory'}`);
      return got;
    };
    const want = await centre(at.planeDir);
    const ranges: string[] = [];
    const onRequest = (r: { url(): string; headers(): Record<string, string> }) => {
      if (/\.pmtiles$/.test(r.url()) && r.headers().range) ranges.push(r.headers().range);
    };
    page.on('request', onRequest);
    const got = await centre(`${at.host}index.html?tileset=slide.pmtiles`);
    page.off('request', onRequest);
    got.forEach((v, i) => expect(v).toBeCloseTo(want[i], 6));
    // The tiles the fit read are drawn from those bytes: no range is asked of the host twice.
    expect(ranges.length).toBeGreaterThan(2);
    expect(ranges.filter((r, i) => ranges.indexOf(r) !== i)).toEqual([]);
  });

  it('spans the ramp of a number over the layers ticked: nuclei alone by area get the whole ramp', async () => {
    await view(`${at.slideDir}#${VIEW}&c=0&z=0&colour=area`);
    const d = JSON.parse(fs.readFileSync(path.join(dir, 'slide-dir', 'tileset.json'), 'utf8')) as { vector_layers: { id: string; fieldranges: Record<string, number[]> }[] };
    const range = (id: string) => d.vector_layers.find((l) => l.id === id)!.fieldranges.area;
    const [cellsRange, nucleiRange] = [range('cells'), range('nuclei')];
    expect(await page.locator('#legend .ramp-ends').innerText()).toBe(`${nucleiRange[0]} … ${cellsRange[1]}`);
    await page.locator('#layers label', { hasText: 'cells' }).locator('input').uncheck();
    await page.evaluate(() => window.__viewer.settle());
    // Before, the cells' range stayed: every nucleus was coloured in the ramp's first fifth, one dark purple.
    expect(await page.locator('#legend .ramp-ends').innerText()).toBe(`${nucleiRange[0]} … ${nucleiRange[1]}`);
    expect(await page.evaluate((v) => window.__viewer.colourOf(v), nucleiRange[1])).toBe('#fde725');
    await page.locator('#layers label', { hasText: 'cells' }).locator('input').check();
    await page.evaluate(() => window.__viewer.settle());
    expect(await page.locator('#legend .ramp-ends').innerText()).toBe(`${nucleiRange[0]} … ${cellsRange[1]}`);
  });

  it('shows a directory build from a static host, its missing (empty) tiles as empty, asking only for tiles over the data', async () => {
    const plane = { c: 1, z: 2 };
    const hash = `#${VIEW}&c=${plane.c}&z=${plane.z}`;
    await view(`${at.slideDir}${hash}`);
    const want = await probe(plane, 'directory-reference');
    const asked: string[] = [];
    const onRequest = (r: { url(): string }) => { if (/\.pbf$/.test(r.url())) asked.push(r.url()); };
    page.on('request', onRequest);
    // Over the slide's bottom-right corner, at its finest tiles (512 px): the row below y 1536 holds nothing.
    for (const url of [`${at.host}index.html?tileset=slide-dir/tileset.json${hash}`, `${at.host}index.html?tileset=slide-dir/tileset.json#zoom=3&x=1900&y=1300&c=1&z=2`]) {
      await view(url);
      expect(await errorsOf(), url).toEqual([]);
    }
    page.off('request', onRequest);
    await view(`${at.host}index.html?tileset=slide-dir/tileset.json${hash}`);
    const got = await probe(plane, 'static-directory');
    expect(got.ids).toEqual(want.ids);
    got.colours.forEach((c, i) => expect(close(c, want.colours[i], 2), `cell ${got.cells[i].id}`).toBe(true));
    // The slide is 2012 × 1342 px in a 2048 px world: nothing asked for starts past x 2012 or y 1342 (plus the
    // view's margin, 1/64 of 2012 px); without the bounds, row 3 of zoom 2 was asked for, and 404 was an error.
    expect(asked.length).toBeGreaterThan(0);
    for (const url of asked) {
      const [z, x, y] = url.split('/').slice(-3).map((v) => parseInt(v, 10));
      const tilePx = 2048 / 2 ** z;
      expect(x * tilePx, url).toBeLessThan(2012 + 2012 / 64);
      expect(y * tilePx, url).toBeLessThan(1342 + 2012 / 64);
    }
  });

  it('opens one archive of a folder directly at its own plane, and the other planes from the archives beside it', async () => {
    await view(`${at.host}index.html?tileset=folder/tiles-c1-z2.pbf.pmtiles#${VIEW}`);
    expect(await page.evaluate(() => ({ ...(window.__viewer as unknown as { plane: object }).plane }))).toEqual({ t: 0, c: 1, z: 2 });
    const got = await probe({ c: 1, z: 2 }, 'folder-archive-direct-c1-z2');
    expect(got.cells.length).toBeGreaterThan(60);
    got.cells.forEach((cell, i) => expect(got.ids[i], `cell ${cell.id}`).toContain(cell.id));
    await page.selectOption('#plane-c', '0');
    await page.selectOption('#plane-z', '0');
    await page.evaluate(() => window.__viewer.settle());
    const other = await probe({ c: 0, z: 0 }, 'folder-archive-direct-switched-c0-z0');
    expect(other.cells.length).toBeGreaterThan(60);
    other.cells.forEach((cell, i) => expect(other.ids[i], `cell ${cell.id}`).toContain(cell.id));
    expect(await errorsOf()).toEqual([]);
    // Built without a name: called by its folder, not by the archive of the plane it opened at.
    await view(`${at.host}index.html?tileset=${encodeURIComponent('nameless run/tiles-c1-z2.pbf.pmtiles')}#${VIEW}`);
    expect(await page.locator('#title').innerText()).toBe('nameless run');
  });

  it('reads an archive from a host whose weak ETags are of each range, not of the file (no false "replaced")', async () => {
    const cell = cells().filter((c) => c.c === 0 && c.z === 0)[0];
    await view(`${at.perRange}index.html?tileset=slide.pmtiles#${VIEW}`);
    expect((await page.evaluate(([x, y]) => window.__viewer.featuresAt(x, y), [cell.x, cell.y] as const)).map((f) => f.id)).toContain(cell.id);
    expect(await page.locator('#status').innerText()).not.toMatch(/replaced|failed/);
    expect(await errorsOf()).toEqual([]);
  });

  it('opens a pyramid folder given as ?tileset= (as serve, inspect and verify take OUT) by its tileset.json', async () => {
    const cell = cells().find((c) => c.c === 1 && c.z === 2)!;
    // Before: "HTTP 404 (no descriptor there: not a pyramid, or its build has not finished)" for a built pyramid.
    const logged = consoleErrors.length;
    for (const url of [`${at.host}index.html?tileset=slide-dir`, `${at.host}index.html?tileset=slide-dir/`, `${at.site}?tileset=slide-dir/`, `${at.site}?tileset=slide-dir`]) {
      await view(`${url}#zoom=4&x=${cell.x}&y=${cell.y}&c=1&z=2`);
      expect(await page.locator('#title').innerText(), url).toBe('sample slide');
      expect((await page.evaluate(([x, y]) => window.__viewer.featuresAt(x, y), [cell.x, cell.y] as const)).map((f) => f.id), url).toContain(cell.id);
      expect(await errorsOf(), url).toEqual([]);
    }
    // Its tileset.json is asked for first: the folder's own URL was, answered 404, and the browser logged that.
    expect(consoleErrors.slice(logged)).toEqual([]);
  });

  it('fits the data below the panel on a phone, once the panel has its full height', async () => {
    await page.setViewportSize({ width: 360, height: 640 });
    try {
      await view(`${at.host}index.html?tileset=slide-dir/tileset.json`);
      const panel = await page.locator('#panel').boundingBox();
      const shown = cells().filter((c) => c.c === 0 && c.z === 0);
      const [, top] = await page.evaluate(([x, y]) => window.__viewer.toScreen(x, y), [shown[0].x, Math.min(...shown.map((c) => c.y))] as const);
      expect(top, `data top ${top}, panel bottom ${panel?.y ?? 0} + ${panel?.height ?? 0}`).toBeGreaterThan((panel?.y ?? 0) + (panel?.height ?? 0));
    } finally {
      await page.setViewportSize({ width: 1000, height: 640 });
    }
  });

  it('reads a pyramid whose folder name holds braces, from a static host and through serve', async () => {
    const cell = cells().filter((c) => c.c === 0 && c.z === 0)[0];
    for (const base of [at.host, at.site]) {
      await view(`${base}index.html?tileset=${encodeURIComponent('run {c}/tileset.json')}#${VIEW}&c=0&z=0`);
      expect((await page.evaluate(([x, y]) => window.__viewer.featuresAt(x, y), [cell.x, cell.y] as const)).map((f) => f.id), base).toContain(cell.id);
      expect(await errorsOf(), base).toEqual([]);
    }
  });

  it('logs no errors', () => {
    expect(consoleErrors).toEqual([]);
  });
});
