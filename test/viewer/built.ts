// A FeatureCollection built by the real CLI into a 1,024-px pyramid of zooms 0–2, served, and a browser page for it.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { startServer, type Server } from '../../src/serve.js';
import { tmpDir } from '../helpers/pyramid.js';
import { expect } from 'vitest';
import { launch, openPage, screen, type ViewerHandle } from './page.js';

declare const window: { __viewer: ViewerHandle };

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface BuiltViewer {
  server: Server;
  page: Page;
  /** Console errors, page errors and failed requests of the page. */
  errors: string[];
  close(): Promise<void>;
}

/** Builds `features` (written as given: their order is the input's) and opens a page on the served pyramid. */
export async function builtViewer(name: string, features: unknown[]): Promise<BuiltViewer> {
  const dir = tmpDir(`mudm-${name}`);
  const input = path.join(dir, `${name}.json`);
  fs.writeFileSync(input, JSON.stringify({ type: 'FeatureCollection', features }));
  const out = path.join(dir, 'out');
  await new Promise<void>((resolve, reject) => {
    execFile('node', [path.join(ROOT, 'bin/mudm-tiles.js'), 'build', input, '-o', out, '--image-size', '1024,1024', '--max-zoom', '2', '--workers', '1'],
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
    return { server, page: await openPage(browser, errors), errors, close };
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
