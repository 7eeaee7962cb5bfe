// Points with a `radius` (spec 2.1 rule 3) are in every tile their circle reaches, not only in those of their centre.
import { describe, expect, it } from 'vitest';
import { buildPyramid } from '../../src/build/pipeline.js';
import { MemorySink } from '../../src/io/sink.js';
import { memorySource } from '../../src/io/read.js';
import { memoryReader, verifyPyramid } from '../../src/inspect/index.js';
import { decodePbf, sinkJson, withoutReport } from '../helpers/pyramid.js';

const SIDE = 16384;
const MAX_ZOOM = 6;

async function build(opts: Record<string, unknown>, text: string): Promise<MemorySink> {
  const sink = new MemorySink();
  await buildPyramid([{ source: memorySource('spots.json', text) }], { workers: 1, memoryBudget: 64 * 1024 * 1024, imageSize: `${SIDE},${SIDE}`, maxZoom: MAX_ZOOM, ...opts }, { sink });
  return sink;
}

/** A seeded generator of numbers in [0, 1): the same points every run. */
function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

interface Spot { id: number; positions: number[][]; radius: unknown }

/** Points near tile borders of every zoom (each border within a few radii of it), some of them MultiPoints. */
function spots(): Spot[] {
  const rnd = seeded(74);
  // Borders of zooms 1 to 6 (tiles of 8192 down to 256 px), and the world's edges.
  const borders = [8192, 4096, 12288, 2048, 6144, 1024, 3072, 512, 7680, 256, 15872, 0, SIDE];
  const near = () => {
    const b = borders[Math.floor(rnd() * borders.length)];
    return Math.min(SIDE - 0.5, Math.max(0.5, b + (rnd() - 0.5) * 120));
  };
  const out: Spot[] = [];
  for (let id = 1; id <= 90; id++) {
    const radius = 0.5 + rnd() * 45;
    const n = id % 10 === 0 ? 3 : 1;
    const positions = Array.from({ length: n }, () => [near(), rnd() < 0.5 ? near() : 1 + rnd() * (SIDE - 2)]);
    out.push({ id, positions, radius });
  }
  // A MultiPoint of many points (stored in part away from its centre: RecordRouter.placeNear) reaches as far.
  out.push({ id: 99, positions: Array.from({ length: 80 }, () => [near(), near()]), radius: 20.5 });
  // One whose centroid is near a unit border (x 1024 at zoom 4) and a point 26 px beyond it, its circle across: the unit
  // on the far side reads the whole record and keeps its points near its tiles (RecordReader.feature `near`).
  out.push({ id: 98, positions: [...Array.from({ length: 69 }, (_, k) => [880 + (k % 10), 4000 + 10 * k]), [998, 4500]], radius: 20.5 });
  // 15 px right of and below a corner of tiles of zooms 5 and 6 (beyond their buffers of 8 and 4 px), radius 20 px:
  // the circle's box reaches the tile diagonal to the centre, the circle (21.2 px from the corner) does not.
  out.push({ id: 97, positions: [[1024 + 15, 1024 + 15]], radius: 20 });
  // A radius the viewer does not draw as a circle: these stay where their centre is.
  for (const [i, radius] of [0, -5, '30', null, Infinity].entries()) out.push({ id: 100 + i, positions: [[8192 + 10 + i, 4096 - 9]], radius });
  return out;
}

/**
 * Independently of the build: the tiles of zoom z holding each position, counted per tile. A position is quantised to
 * the zoom's grid (4096 units a tile); it is in a tile when within the tile's buffer of 64 units, edges included, or,
 * with a usable radius, when the circle reaches into the tile: its distance to the tile's rectangle is at most the
 * radius (in those units). `box`: the circle's box instead, reaching tiles diagonal to it the circle misses.
 */
function expected(s: Spot, z: number, box = false): Map<string, number> {
  const n = 2 ** z, scale = (4096 * n) / SIDE;
  const r = typeof s.radius === 'number' && Number.isFinite(s.radius) && s.radius > 0 ? s.radius * scale : 0;
  const tiles = new Map<string, number>();
  for (const [x, y] of s.positions) {
    const qx = Math.round(x * scale), qy = Math.round(y * scale);
    for (let tx = 0; tx < n; tx++) {
      const gx = Math.max(0, tx * 4096 - qx, qx - (tx + 1) * 4096);
      for (let ty = 0; ty < n; ty++) {
        const gy = Math.max(0, ty * 4096 - qy, qy - (ty + 1) * 4096);
        const inBuffer = gx <= 64 && gy <= 64;
        const reached = box ? gx <= r && gy <= r : Math.hypot(gx, gy) <= r;
        if (inBuffer || reached) tiles.set(`${tx}/${ty}`, (tiles.get(`${tx}/${ty}`) ?? 0) + 1);
      }
    }
  }
  return tiles;
}

/** Per feature id, the tiles of zoom z holding it and how many of its positions each holds, from JSON or PBF tiles. */
function placed(sink: MemorySink, z: number, ext: 'json' | 'pbf'): Map<number, Map<string, number>> {
  const out = new Map<number, Map<string, number>>();
  const add = (id: number, tile: string, k: number) => {
    let m = out.get(id);
    if (m === undefined) out.set(id, (m = new Map()));
    m.set(tile, k);
  };
  for (const [p, bytes] of sink.files) {
    const m = new RegExp(`^${z}/(\\d+)/(\\d+)\\.${ext}$`).exec(p);
    if (!m) continue;
    const tile = `${m[1]}/${m[2]}`;
    if (ext === 'pbf') {
      for (const f of decodePbf(bytes, SIDE, z, Number(m[1]), Number(m[2]))) add(f.id as number, tile, f.rings.length);
    } else {
      const fc = JSON.parse(Buffer.from(bytes).toString('utf8')) as { features: Array<{ id: number; geometry: { type: string; coordinates: unknown[] } }> };
      for (const f of fc.features) add(f.id, tile, f.geometry.type === 'Point' ? 1 : f.geometry.coordinates.length);
    }
  }
  return out;
}

describe('points drawn as circles', () => {
  const all = spots();
  const text = JSON.stringify({
    type: 'FeatureCollection',
    features: all.map((s) => ({
      type: 'Feature', id: s.id, properties: { radius: s.radius },
      geometry: s.positions.length === 1 ? { type: 'Point', coordinates: s.positions[0] } : { type: 'MultiPoint', coordinates: s.positions },
    })),
  });

  it('places each point in exactly the tiles its circle reaches, in JSON and PBF tiles, at every zoom', async () => {
    const sink = await build({ unitSize: 2048 }, text);
    const report = sinkJson(sink, 'build-report.json') as { tiles: { byZoom: Record<string, { thinned: number }> } };
    let beyondCentre = 0, boxOnly = 0;
    for (let z = 0; z <= MAX_ZOOM; z++) {
      expect(report.tiles.byZoom[z].thinned, `zoom ${z}`).toBe(0);
      // The zoom-0 JSON tile is the overview descriptor, not a tile of features.
      for (const ext of z === 0 ? ['pbf' as const] : ['json', 'pbf'] as const) {
        const got = placed(sink, z, ext);
        for (const s of all) {
          const want = expected(s, z);
          const have = got.get(s.id) ?? new Map();
          expect([...have].sort(), `feature ${s.id} (radius ${String(s.radius)}) at zoom ${z}, ${ext}`).toEqual([...want].sort());
          if (ext === 'pbf') beyondCentre += want.size - expected({ ...s, radius: 0 }, z).size;
          if (ext === 'pbf') boxOnly += [...expected(s, z, true)].filter(([k, c]) => want.get(k) !== c).length;
        }
      }
    }
    // The circles do reach tiles their centres' buffers do not (the case this is about), many times over.
    expect(beyondCentre).toBeGreaterThan(50);
    // And the circles' boxes reach tiles diagonal to them the circles do not (point 97 at zooms 5 and 6, and more).
    expect(boxOnly).toBeGreaterThan(2);
    // verify takes a centre beyond the buffer by up to its radius.
    expect(verifyPyramid(memoryReader(sink.files)).problems).toEqual([]);
  });

  it('gives the same pyramid however the build is cut into units, with 1 or 2 workers, spilled or not', async () => {
    const a = withoutReport(await build({ unitSize: 2048 }, text));
    expect(withoutReport(await build({ unitSize: 256, workers: 2, memoryBudget: 1 }, text))).toEqual(a);
    expect(withoutReport(await build({ unitSize: 16384, workers: 2 }, text))).toEqual(a);
    // Units of coarser tiles than the stored cells keep the records near them (`partRecords`): a circle's too.
    const coarse = withoutReport(await build({ unitSize: 2048, maxZoom: 4 }, text));
    expect(withoutReport(await build({ unitSize: 256, maxZoom: 4 }, text))).toEqual(coarse);
  });

  it('keeps a point whose radius spans more work cells than a feature may (a radius not in pixels), stored by its centre', async () => {
    const features = [
      { type: 'Feature', id: 1, properties: { radius: 1e9 }, geometry: { type: 'Point', coordinates: [100, 100] } },
      { type: 'Feature', id: 2, properties: { radius: 4 }, geometry: { type: 'Point', coordinates: [200, 100] } },
    ];
    // Without --image-size the world is the data's: the circle is not cut to it, and would span 10^11 cells.
    const sink = await build({ imageSize: undefined, maxZoom: 2 }, JSON.stringify({ type: 'FeatureCollection', features }));
    const report = sinkJson(sink, 'build-report.json') as { features: { valid: number; invalid: number } };
    expect(report.features).toMatchObject({ valid: 2, invalid: 0 });
    expect([...placed(sink, 2, 'json').keys()].sort()).toEqual([1, 2]);
    expect([...placed(sink, 2, 'pbf').keys()].sort()).toEqual([1, 2]);
  });

  it('hands circles wider than a sixteenth of the coarser cells up to every cell they reach (they crashed the build, exit 5)', async () => {
    // Radii of 300 to 1,000 px in units of 256 px: a circle reaches cells of the levels above beyond its parent's
    // neighbours, which the levels' schedule must wait for (halfExtent counts the radius).
    const rnd = seeded(5);
    const features = Array.from({ length: 300 }, (_, i) => ({ type: 'Feature', id: i + 1, properties: { radius: 300 + Math.round(rnd() * 700) }, geometry: { type: 'Point', coordinates: [rnd() * SIDE, rnd() * SIDE] } }));
    const text = JSON.stringify({ type: 'FeatureCollection', features });
    const small = await build({ unitSize: 256, workers: 2, maxZoom: 5 }, text);
    expect(verifyPyramid(memoryReader(small.files)).problems).toEqual([]);
    expect(withoutReport(small)).toEqual(withoutReport(await build({ unitSize: 4096, maxZoom: 5 }, text)));
  });
});
