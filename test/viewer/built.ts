// A FeatureCollection built by the real CLI into a 1,024-px pyramid of zooms 0–2, served, and a browser page for it.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { startServer, type Server } from '../../src/serve.js';
import { tmpDir } from '../helpers/pyramid.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { HAVE_CHROMIUM, launch, openPage, screen, type ViewerHandle } from './page.js';

declare const window: { __viewer: ViewerHandle };

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface BuiltViewer {
  server: Server;
  page: Page;
  /** The pyramid built, as served. */
  out: string;
  /** Console errors, page errors and failed requests of the page. */
  errors: string[];
  close(): Promise<void>;
}

/**
 * Builds `features` (written as given: their order is the input's) and opens a page on the served pyramid; `args`:
 * more build options (`--min-zoom 2`).
 */
export async function builtViewer(name: string, features: unknown[], args: string[] = []): Promise<BuiltViewer> {
  const dir = tmpDir(`mudm-${name}`);
  const input = path.join(dir, `${name}.json`);
  fs.writeFileSync(input, JSON.stringify({ type: 'FeatureCollection', features }));
  const out = path.join(dir, 'out');
  await new Promise<void>((resolve, reject) => {
    execFile('node', [path.join(ROOT, 'bin/mudm-tiles.js'), 'build', input, '-o', out, '--image-size', '1024,1024', '--max-zoom', '2', '--workers', '1', ...args],
      (error, _stdout, stderr) => (error ? reject(new Error(stderr)) : resolve()));
  });
  const server = await startServer({ root: out, port: 0 });
  let browser: Browser | undefined;
  const errors: string[] = [];
  const close = async () => {
    await browser?.close();
    await server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    browser = await launch();
    return { server, page: await openPage(browser, errors), out, errors, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * The page at zoom 2 of the pyramid (a screen pixel an image pixel) coloured by `colour`, settled: the colour drawn at
 * an image pixel's centre.
 */
export async function pixelsAtZoom2(page: Page, url: string, colour: string, name: string): Promise<(x: number, y: number) => Promise<number[]>> {
  await page.goto(`${url}#zoom=2&x=512&y=512&colour=${colour}`);
  await page.evaluate(() => window.__viewer.ready);
  await page.evaluate(() => window.__viewer.settle());
  expect(await page.evaluate(() => window.__viewer.tileZoom())).toBe(2);
  const at = await screen(page, name);
  return async (x, y) => {
    const [sx, sy] = await page.evaluate(([px, py]) => window.__viewer.toScreen(px, py), [x + 0.5, y + 0.5] as const);
    return at(sx - 0.5, sy - 0.5);
  };
}

/** The page on a pyramid built for a test file, and the served pyramid's URL. */
export interface Viewed { page: Page; url: string }

/**
 * Builds `features` and opens a page on them before the file's tests, and closes both after (nothing without
 * Chromium): what the tests read, once the hooks ran. `itLogsNoErrors` then checks the page and the server.
 */
export function useBuiltViewer(name: string, features: () => unknown[], args: string[] = []): Viewed & { built?: BuiltViewer } {
  const viewed = {} as Viewed & { built?: BuiltViewer };
  beforeAll(async () => {
    if (!HAVE_CHROMIUM) return;
    const built = await builtViewer(name, features(), args);
    Object.assign(viewed, { built, page: built.page, url: built.server.url });
  }, 60_000);
  afterAll(async () => {
    await viewed.built?.close();
  });
  return viewed;
}

/** The test, last in a file, that neither the page nor the server logged an error. */
export function itLogsNoErrors(viewed: ReturnType<typeof useBuiltViewer>): void {
  it('logs no errors', async () => {
    expect(await viewed.page.evaluate(() => window.__viewer.errors)).toEqual([]);
    expect(viewed.built?.errors).toEqual([]);
  });
}
