// A dense stored cell tiled as four part units (each keeping the records that meet it) gives the tiles the whole cell
// gives, and makes each feature its own in exactly one part, the one holding its box centre.
import { describe, expect, it } from 'vitest';
import { parseBatch, META } from '../../src/stages/parse.js';
import { tileUnit, type TileTask } from '../../src/stages/unit.js';
import { RecordReader } from '../../src/stages/record.js';

const SIDE = 2048;

/** Parses features (in a 2048 px world, one 2048 px stored cell) into that cell's records, as a worker would. */
function records(features: string[]): Uint8Array {
  const text = features.join('');
  const meta: number[] = [];
  let at = 0;
  features.forEach((f, i) => { meta.push(i, 1, 1, at, at + f.length, -1); at += f.length; });
  const r = parseBatch({
    kind: 'parse', file: 'f', layer: 'cells', rule: { fixed: {}, fields: {} }, cellSize: 2048, side: SIDE, seq0: 0,
    raw: { bytes: new TextEncoder().encode(text), meta: Float64Array.from(meta) }, sampleCap: 5, json: true,
  });
  expect(r.units.map(([k]) => k)).toEqual(['0/0/0/0/0']);
  expect(meta.length / META).toBe(features.length);
  return r.units[0][1];
}

function task(bytes: Uint8Array, cell: { z: number; x: number; y: number }, part: boolean, fewFields?: TileTask['spec']['fewFields']): TileTask {
  return {
    kind: 'tile', unit: { key: `0/0/0/${cell.x}/${cell.y}`, level: 0, plane: { t: 0, c: 0, z: 0 }, cell, sources: ['0/0/0/0/0'] },
    sources: [{ chunks: [bytes.slice()] }], dims: [], next: cell.z > 0 ? { zoom: cell.z - 1 } : undefined, part,
    spec: {
      side: SIDE, minZoom: cell.z, maxZoom: 3, finestZoom: 3, cell, layers: [{ id: 'cells' }], formats: { json: true, pbf: true },
      lod: 'auto', tileBudget: 500 * 1024, fewFields,
    },
  };
}

const square = (x: number, y: number, s: number) =>
  `{"type":"Feature","properties":{"x":${x},"cls":{"name":"c${x % 3}","n":${y}}},"geometry":{"type":"Polygon","coordinates":[[[${x},${y}],[${x + s},${y}],[${x + s},${y + s}],[${x},${y + s}],[${x},${y}]]]}}`;

describe('part units', () => {
  it('tile what the whole cell tiles, and own each feature once', () => {
    // Small squares everywhere, some across the part borders (1024 px), one across all four parts.
    const features = [square(1000, 1000, 48), square(1010, 200, 30), square(300, 1015, 20)];
    for (let i = 0; i < 60; i++) features.push(square((i * 331) % 1990, (i * 577) % 1990, 8 + (i % 5)));
    const bytes = records(features);
    // The whole world as one unit (zooms 0-3), and its four quarters as part units (zooms 1-3).
    const whole = tileUnit(task(bytes, { z: 0, x: 0, y: 0 }, false));
    const parts = [0, 1].flatMap((y) => [0, 1].map((x) => tileUnit(task(bytes, { z: 1, x, y }, true))));
    const tiles = (rs: typeof parts) => rs.flatMap((r) => r.tiles).filter((t) => t.z >= 1).map((t) => [t.path, Buffer.from(t.bytes as Uint8Array).toString('base64')]).sort();
    expect(tiles(parts).length).toBeGreaterThan(20);
    expect(tiles(parts)).toEqual(tiles([whole]));
    // What goes up to zoom 0: every feature once, from the part holding its centre.
    const owners = new Map<number, number>();
    for (const r of parts) {
      for (const [, b] of r.next) {
        const reader = new RecordReader(b);
        while (reader.next()) owners.set(reader.seq, (owners.get(reader.seq) ?? 0) + 1);
      }
    }
    expect([...owners.keys()].sort((a, b) => a - b)).toEqual(features.map((_, i) => i));
    expect([...owners.values()].every((n) => n === 1)).toBe(true);
  });

  it('pass up only the --coarse-fields when every zoom above carries only those', () => {
    const features = [square(100, 100, 40), square(1500, 300, 60), square(700, 1700, 30)];
    const bytes = records(features);
    /** Per record going up to zoom 0: its tag keys and its JSON head's properties. */
    const upward = (few?: TileTask['spec']['fewFields']) => tileUnit(task(bytes, { z: 1, x: 0, y: 0 }, false, few)).next.flatMap(([, b]) => {
      const r = new RecordReader(b), out: [string[], unknown][] = [];
      while (r.next()) {
        const f = r.feature(() => 0);
        const head = JSON.parse(`${new TextDecoder().decode(f.headJson)}null}`) as { properties: unknown };
        out.push([f.tags?.keys ?? [], head.properties]);
      }
      return out;
    });
    // Zoom 0 is below zoom 1, from which tiles carry every field: only cls.name goes up.
    expect(upward({ keep: ['cls.name'], below: 1 })).toEqual(['c1', 'c0', 'c1'].map((name) => [['cls.name'], { cls: { name } }]));
    // Zoom 0 carries every field: all go up.
    expect(upward({ keep: ['cls.name'], below: 0 })).toEqual([[100, 100], [1500, 300], [700, 1700]].map(([x, y]) => [['x', 'cls.name', 'cls.n'], { x, cls: { name: `c${x % 3}`, n: y } }]));
    expect(upward()).toEqual(upward({ keep: ['cls.name'], below: 0 }));
  });
});

describe('records passed up with only the --coarse-fields', () => {
  it('keep a point\'s radius, by which the levels above place it in every tile its circle reaches', () => {
    // Points of radius 300 px near the edges of the four zoom-1 tiles (1,024 px, buffer 16 px): their circles reach
    // cells of the zoom-0 level whose buffers do not.
    const point = (x: number, y: number, i: number) => `{"type":"Feature","id":${i + 1},"properties":{"radius":300,"cls":{"name":"c${i % 3}"},"x":${x}},"geometry":{"type":"Point","coordinates":[${x},${y}]}}`;
    const features = [[1000, 500], [1050, 1500], [500, 1040], [1500, 1000], [20, 20]].map(([x, y], i) => point(x, y, i));
    const bytes = records(features);
    /** The cells records go up to, and the tag keys each record there holds. */
    const upward = (few?: TileTask['spec']['fewFields']) => tileUnit(task(bytes, { z: 2, x: 0, y: 0 }, false, few)).next.map(([key, b]) => {
      const r = new RecordReader(b), keys: string[][] = [];
      while (r.next()) keys.push(r.feature(() => 0).tags?.keys ?? []);
      return [key, keys.length, keys.every((k) => k.includes('radius'))];
    });
    const all = upward();
    expect(all.length).toBeGreaterThan(1);
    // Zooms 0 and 1 carry only cls.name, yet go to the same cells as every field does, each record with its radius.
    expect(upward({ keep: ['cls.name'], below: 2 })).toEqual(all);
  });
});
