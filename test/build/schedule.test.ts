// LevelGraph: which coarser cells a unit may feed, and when a coarser cell's inputs are final.
import { describe, expect, it } from 'vitest';
import { LevelGraph } from '../../src/build/schedule.js';
import type { BuildPlan } from '../../src/stages/plan.js';

/** A 16,384 px world: level 0 cells of 2,048 px (zoom 3), then zooms 2, 1, 0. */
const plan = { world: { side: 16384, width: 16384, height: 16384 }, levels: [3, 2, 1, 0].map((zoom) => ({ zoom, topZoom: zoom })) } as unknown as BuildPlan;
const all = (z: number) => Array.from({ length: 4 ** z }, (_, i) => `0/0/0/${i % 2 ** z}/${Math.floor(i / 2 ** z)}`);

describe('LevelGraph', () => {
  it('sends a cell inside its parent to the parent alone, and one on its parent\'s edge to the neighbours too', () => {
    const g = new LevelGraph(plan, 20, 0, all(3), 4);
    // Cell 1/1 of zoom 3 lies in parent 0/0 of zoom 2, at its right and bottom edges: it reaches parents 1/0, 0/1, 1/1.
    expect(g.reach(0, '0/0/0/1/1').sort()).toEqual(['0/0/0/0/0', '0/0/0/0/1', '0/0/0/1/0', '0/0/0/1/1']);
    // Cell 0/0 is at the world's corner: its parent only.
    expect(g.reach(0, '0/0/0/0/0')).toEqual(['0/0/0/0/0']);
    expect(g.end).toBe(3);
  });

  it('makes a coarser cell final only once every finer cell that reaches it is settled', () => {
    const g = new LevelGraph(plan, 20, 0, all(3), 4);
    const finalAt2 = new Set<string>();
    // Settle zoom 3 column by column: parent 0/0 of zoom 2 waits for columns 0-2 (the 4x4 block around it, clipped).
    for (let x = 0; x < 8; x++) {
      for (let y = 0; y < 8; y++) for (const k of g.settle(0, `0/0/0/${x}/${y}`)) finalAt2.add(k);
      if (x === 1) expect(finalAt2.has('0/0/0/0/0')).toBe(false);
      if (x === 2) expect(finalAt2.has('0/0/0/0/0')).toBe(true);
    }
    expect(finalAt2.size).toBe(16);
    expect(g.accepts(1, '0/0/0/0/0')).toBe(false);
    expect(g.complete).toBe(false);
    // The coarser levels follow: settling zoom 2 makes zoom 1 final, and so on to zoom 0.
    const finalAt1 = [...finalAt2].flatMap((k) => g.settle(1, k));
    expect(finalAt1.sort()).toEqual(all(1).sort());
    const finalAt0 = finalAt1.flatMap((k) => g.settle(2, k));
    expect(finalAt0).toEqual(['0/0/0/0/0']);
    expect(g.settle(3, '0/0/0/0/0')).toEqual([]);
    expect(g.complete).toBe(true);
  });

  it('ends where features reach beyond a parent\'s neighbours: the level above waits for the whole graph', () => {
    // Features 3,000 px from their centre: a 2,048 px cell of zoom 3 could feed cells of zoom 2 two parents away.
    const g = new LevelGraph(plan, 3000, 0, all(3), 4);
    expect(g.end).toBe(0);
    expect(g.accepts(1, '0/0/0/3/3')).toBe(true);
    for (const k of all(3)) expect(g.settle(0, k)).toEqual([]);
    expect(g.complete).toBe(true);
    expect(g.accepts(1, '0/0/0/3/3')).toBe(false);
    // Over zoom 2's 4,096 px cells the same features stay within the neighbours: a new graph from there follows on.
    expect(new LevelGraph(plan, 3000, 1, all(2), 4).end).toBeGreaterThan(1);
  });
});
