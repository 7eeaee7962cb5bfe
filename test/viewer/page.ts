// Headless Chromium for the viewer's browser tests: launch, a page that records every error, the screen as pixels.
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import type { Browser, Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const HAVE_CHROMIUM = fs.existsSync(CHROMIUM);
if (!HAVE_CHROMIUM) console.warn(`skipping the viewer browser tests: ${CHROMIUM} is not installed (Debian package chromium)`);

/** Alpha of the viewer's polygon fill. */
export const FILL_ALPHA = 0.55;

export interface FoundFeature { id: unknown; idNote?: string; layer: string; properties: Record<string, unknown>; type: string }
/** The page's `window.__viewer` handle (viewer/viewer.js), once `ready` has resolved. */
export interface ViewerHandle {
  ready: Promise<boolean>;
  errors: string[];
  featuresAt(px: number, py: number): FoundFeature[];
  toScreen(px: number, py: number): [number, number];
  colourOf(v: unknown): string;
  settle(): Promise<void>;
  field(): string;
  zoom(): number;
  tileZoom(): number;
  view: { getCenter(): number[]; setCenter(c: number[]): void; getZoom(): number; setZoom(z: number): void };
  map: { getSize(): number[] | undefined };
  /** The background image's layer. */
  background: { getVisible(): boolean };
}

export async function launch(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** A page (1000 × 640 unless given) whose console errors, page errors and failed requests land in `errors`. */
export async function openPage(browser: Browser, errors: string[], viewport = { width: 1000, height: 640 }): Promise<Page> {
  const page = await browser.newPage({ viewport, deviceScaleFactor: 1 });
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  // A load the page itself cancels (a tile no longer in view, the page closed mid-load) fails as net::ERR_ABORTED:
  // the viewer's choice, not a fault. A server that fails shows as a reset or an HTTP status.
  page.on('requestfailed', (r) => {
    const why = r.failure()?.errorText ?? '';
    if (why !== 'net::ERR_ABORTED') errors.push(`request failed: ${r.url()} ${why}`);
  });
  return page;
}

/** The rendered page as RGB pixels; with VIEWER_SCREENSHOTS set, also saved there as `<name>.png` to look at. */
export async function screen(page: Page, name?: string): Promise<(x: number, y: number) => number[]> {
  const png = await page.screenshot({ type: 'png' });
  const dir = process.env.VIEWER_SCREENSHOTS;
  if (dir && name) {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `${name}.png`), png);
  }
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return (x, y) => {
    const i = (Math.round(y) * info.width + Math.round(x)) * 3;
    return [data[i], data[i + 1], data[i + 2]];
  };
}

/** A `#rrggbb` fill over a background, as the canvas composes it. */
export function fillOver(hex: string, background: number[]): number[] {
  const n = parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255].map((c, i) => FILL_ALPHA * c + (1 - FILL_ALPHA) * background[i]);
}

export function close(a: number[], b: number[], tolerance = 12): boolean {
  return a.every((v, i) => Math.abs(v - b[i]) <= tolerance);
}

/** The name of the colour (`#rrggbb`, or an RGB triple) nearest to a pixel's, of those given by name. */
export function nearestOf(colours: Record<string, string | number[]>): (pixel: number[]) => string {
  const refs = Object.entries(colours).map(([name, c]) => [name, typeof c === 'string' ? [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16)) : c] as const);
  return (p) => refs.map(([name, c]) => [name, Math.hypot(...c.map((v, i) => v - p[i]))] as const).sort((a, b) => a[1] - b[1])[0][0];
}
