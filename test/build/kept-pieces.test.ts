// The share a thinned zoom draws (kept_fraction), counted in pieces for features of many: what its tiles hold, however the build runs.
import { describe, expect, it } from 'vitest';
import { buildPyramid } from '../../src/build/pipeline.js';
import { MemorySink } from '../../src/io/sink.js';
import { memorySource } from '../../src/io/read.js';
import { mulberry32 } from '../../src/random.js';
import { decodePbf } from '../helpers/pyramid.js';

const SIDE = 8192, GENES = 6, SPOTS = 1500, CELLS = 300;

/**
 * Genes of SPOTS distinct spots each (one MultiPoint a gene) and CELLS small cells, over an 8,192 px slide. Spots lie
 * at the centres of 16 px squares, so no rounding at zooms 0 and 1 moves one across a tile's edge or onto another.
 */
function genesAndCells(): string {
  const rnd = mulberry32(56);
  const features: unknown[] = [];
  for (let g = 0; g < GENES; g++) {
    const taken = new Set<number>();
    const spots: number[][] = [];
    while (spots.length < SPOTS) {
      const k = Math.floor(rnd() * (SIDE / 16) ** 2);
      if (taken.has(k)) continue;
      taken.add(k);
      spots.push([(k % (SIDE / 16)) * 16 + 8, Math.floor(k / (SIDE / 16)) * 16 + 8]);
    }
    features.push({ type: 'Feature', id: g + 1, properties: { kind: 'gene', gene: `G${g}` }, geometry: { type: 'MultiPoint', coordinates: spots } });
  }
  for (let i = 0; i < CELLS; i++) {
    const x = 100 + rnd() * (SIDE - 200), y = 100 + rnd() * (SIDE - 200), s = 10 + rnd() * 10;
    const ring = [[x, y], [x + s, y], [x + s, y + s], [x, y + s], [x, y]];
    features.push({ type: 'Feature', id: 100 + i, properties: { kind: 'cell' }, geometry: { type: 'Polygon', coordinates: [ring] } });
  }
  return JSON.stringify({ type: 'FeatureCollection', features });
}

interface Built { keptFraction: Record<string, Record<string, number> | undefined>; thinned: Record<string, number[]>; files: Map<string, Uint8Array> }

async function build(text: string, opts: Record<string, unknown>): Promise<Built> {
  const sink = new MemorySink();
  const options = { workers: 1, memoryBudget: 64 * 1024 * 1024, imageSize: `${SIDE},${SIDE}`, maxZoom: 4, format: 'pbf', tileBudget: 6000, layerBy: 'kind', ...opts };
  await buildPyramid([{ source: memorySource('genes.json', text) }], options, { sink });
  const json = (name: string) => JSON.parse(Buffer.from(sink.files.get(name)!).toString('utf8')) as Record<string, unknown>;
  const layers = json('tileset.json').vector_layers as { id: string; kept_fraction?: Record<string, number> }[];
  const report = json('build-report.json') as { tiles: { byLayer: Record<string, { thinned: number[] }> } };
  return {
    keptFraction: Object.fromEntries(layers.map((l) => [l.id, l.kept_fraction])),
    thinned: Object.fromEntries(Object.entries(report.tiles.byLayer).map(([id, l]) => [id, l.thinned])),
    files: sink.files,
  };
}

/** Spots and cells a zoom's tiles draw, each counted in the tile whose own square (not its buffer) holds it. */
function drawnAt(b: Built, z: number): { spots: number; cells: number } {
  const ts = SIDE / 2 ** z;
  let spots = 0, cells = 0;
  for (let x = 0; x < 2 ** z; x++) {
    for (let y = 0; y < 2 ** z; y++) {
      const bytes = b.files.get(`${z}/${x}/${y}.pbf`);
      if (!bytes) continue;
      for (const f of decodePbf(bytes, SIDE, z, x, y)) {
        const points = f.layer === 'gene' ? f.rings.flat() : [f.rings[0][0]];
        const inside = points.filter(([px, py]) => px >= x * ts && px < (x + 1) * ts && py >= y * ts && py < (y + 1) * ts).length;
        if (f.layer === 'gene') spots += inside;
        else if (inside > 0) cells++;
      }
    }
  }
  return { spots, cells };
}

/** A share as the descriptor gives it: 4 significant digits, absent (undefined) where the zoom draws all. */
const asGiven = (share: number) => (share < 1 ? Number(share.toPrecision(4)) : undefined);

describe('the share of a layer a thinned zoom draws', () => {
  const text = genesAndCells();

  it('counts the pieces of a feature of many pieces: the kept fraction is the share of the spots its tiles hold, cells one each', async () => {
    const b = await build(text, {});
    const z0 = drawnAt(b, 0);
    // Zoom 0 draws a share of the spots, not all of them: each gene is drawn there, in part.
    expect(z0.spots).toBeGreaterThan(0);
    expect(z0.spots).toBeLessThan(GENES * SPOTS);
    for (const z of [0, 1, 2]) {
      const d = drawnAt(b, z);
      expect(b.keptFraction.gene?.[z], `genes, zoom ${z}`).toBe(asGiven(d.spots / (GENES * SPOTS)));
      expect(b.keptFraction.cell?.[z], `cells, zoom ${z}`).toBe(asGiven(d.cells / CELLS));
      expect(b.thinned.gene[z], `genes thinned, zoom ${z}`).toBe(GENES * SPOTS - d.spots);
    }
    expect(b.keptFraction.gene?.[0]).toBeLessThan(1);
  });

  it('is the same at 1 and 2 workers and with units of 512 px, each feature counted once', async () => {
    const one = await build(text, {});
    for (const opts of [{ workers: 2 }, { unitSize: 512 }, { unitSize: 512, workers: 2 }]) {
      const other = await build(text, opts);
      expect(other.keptFraction, JSON.stringify(opts)).toEqual(one.keptFraction);
      expect(other.thinned, JSON.stringify(opts)).toEqual(one.thinned);
    }
  });
});
