// The legend of a QuPath export whose classes share colours (every "…: Positive" one red): the data's colours kept, the sharing said.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtViewer, type BuiltViewer } from './built.js';
import { HAVE_CHROMIUM, screen, type ViewerHandle } from './page.js';
import { tmpDir } from '../helpers/pyramid.js';

declare const window: { __viewer: ViewerHandle };

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
interface Classified { properties: { classification: { names: string[]; color: number[] } } }

/** A QuPath export as bench/generate.js writes one: 12 classes, QuPath's red for the positive, blue for the negative. */
function qupathExport(): Classified[] {
  const dir = tmpDir('mudm-shared-colours');
  const file = path.join(dir, 'q.geojson');
  execFileSync('node', [path.join(ROOT, 'bench/generate.js'), '--cells', '300', '--seed', '1', '--nuclei', 'polygons', '--format', 'fc-lines', '--width', '1000', '--height', '1000', '--qupath', '-q', '-o', file]);
  const features = (JSON.parse(fs.readFileSync(file, 'utf8')) as { features: Classified[] }).features;
  fs.rmSync(dir, { recursive: true, force: true });
  return features;
}
const hex = (c: number[]): string => `#${c.map((v) => v.toString(16).padStart(2, '0')).join('')}`;

let built: BuiltViewer;
let features: Classified[];

beforeAll(async () => {
  if (!HAVE_CHROMIUM) return;
  features = qupathExport();
  built = await builtViewer('shared-colours', features);
  await built.page.setViewportSize({ width: 1400, height: 900 });
}, 60_000);
afterAll(async () => { await built?.close(); });

describe.skipIf(!HAVE_CHROMIUM)('legend of classes the data gives one colour', () => {
  it('keeps QuPath\'s colours and marks each row with the footnote of the colour it shares', async () => {
    const { page, server } = built;
    await page.goto(server.url);
    await page.evaluate(() => window.__viewer.ready);
    await page.evaluate(() => window.__viewer.settle());
    expect(await page.evaluate(() => window.__viewer.field())).toBe('classification.name');
    const given = new Map(features.map((f) => [f.properties.classification.names.join(': '), hex(f.properties.classification.color)]));
    const colours = [...new Set(given.values())].sort();
    expect(colours.length).toBe(2);
    expect(given.size).toBeGreaterThan(6);

    const rows = await page.locator('#legend > div:not(.shared)').evaluateAll((rs) => rs.map((r) => {
      const el = r as unknown as { childNodes: Iterable<{ nodeType: number; textContent: string }>; dataset: { shared?: string }; querySelector(s: string): { dataset: { colour: string } } };
      return { value: Array.from(el.childNodes).filter((n) => n.nodeType === 3).map((n) => n.textContent).join(''), colour: el.querySelector('.swatch').dataset.colour, shared: el.dataset.shared };
    }));
    await screen(page, 'shared-colours-legend');
    // Every class in the file's own colour: QuPath's, as users see them there.
    expect(rows.map((r) => [r.value, r.colour])).toEqual([...given].sort(([a], [b]) => (a < b ? -1 : 1)));
    // Rows of one colour carry one footnote, rows of the other colour another.
    const marks = new Map(colours.map((c) => [c, new Set(rows.filter((r) => r.colour === c).map((r) => r.shared))]));
    for (const set of marks.values()) expect(set.size).toBe(1);
    expect(new Set([...marks.values()].flatMap((s) => [...s]))).toEqual(new Set(['1', '2']));
    const notes = await page.locator('#legend > div.shared').allInnerTexts();
    const count = (n: string): number => rows.filter((r) => r.shared === n).length;
    expect(notes).toEqual(['1', '2'].map((n) => `${'¹²'[Number(n) - 1]} ${count(n)} values share one colour in the data: point at a feature to see which`));
  });

  it('says which colours are nearly one, and hashes no value onto a colour the data gives (the viewer modules in the page)', async () => {
    // A string, so that the test runner leaves the page's own dynamic imports alone.
    const got = await built.page.evaluate(`(async () => {
      const colours = await import('/viewer/colours.js');
      const legend = (layer) => {
        const fields = colours.collectFields({ vector_layers: [layer] });
        return colours.legendOf('class', fields, ['l'], colours.colourer('class', fields, ['l']));
      };
      const near = legend({ id: 'l', fields: { class: 'String' }, fieldenums: { class: ['Stroma', 'Tumor', 'Tumor: Positive', 'Other'] }, fieldcolors: { class: { Tumor: '#c80000', 'Tumor: Positive': '#dc3c28', Stroma: '#96c896' } } });
      // Values the descriptor does not list (too many to enumerate) are hashed onto the palette.
      const unlisted = colours.collectFields({ vector_layers: [{ id: 'l', fields: { class: 'String' }, fieldcolors: { class: { Tumor: '#e6194b' } } }] });
      const of = colours.colourer('class', unlisted, ['l']);
      return { near, hashed: Array.from({ length: 200 }, (_, i) => of('class ' + i)) };
    })()`) as { near: { rows: Array<{ value: string; colour: string; shared?: number }>; shared: unknown[] }; hashed: string[] };
    expect(got.near.rows.map((r) => [r.value, r.shared ?? null])).toEqual([['Other', null], ['Stroma', null], ['Tumor', 1], ['Tumor: Positive', 1]]);
    expect(got.near.shared).toEqual([{ count: 2, near: true }]);
    // The palette's first colour is the data's Tumor: no other class is drawn in it.
    expect(new Set(got.hashed).size).toBeGreaterThan(10);
    expect(got.hashed).not.toContain('#e6194b');
  });
});
