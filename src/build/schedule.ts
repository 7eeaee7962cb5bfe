// When a coarser unit's inputs are final: which cells of the level above a unit may send features to, and how many
// finer cells each coarser cell still waits for. Pure bookkeeping for build/levels.ts.
import type { BuildPlan } from '../stages/plan.js';
import { cellKey, parseUnitKey, unitKeyPrefix } from '../stages/unit-key.js';

/**
 * The cells of a run of levels, from `start` (whose cells are all known) up to `end`, and for each cell above
 * `start` how many cells of the level below may still send it features.
 *
 * A unit forwards its own features (those whose box centre lies in its cell) to the cells of the level above that
 * their reduced box, plus a pad, meets (stages/unit.ts). A box reaches at most `halfExtent` (the largest half side
 * of any input box) from its centre, plus what reducing and padding add, far below a sixteenth of the coarser cell;
 * so a cell reaches the coarser cells within that margin of it: its parent, and the parent's neighbours when it
 * lies on the parent's edge. A coarser cell is final, its inputs complete, once every cell below that reaches it is
 * settled (tiled, resumed, or found empty). Where features are so large that a cell could reach beyond its
 * parent's neighbours, the graph ends (`end`): the level above it is final only when the graph is `complete`, and
 * a new graph starts there from the cells that received features.
 */
export class LevelGraph {
  /** Per level from start + 1 to end: cell key → cells of the level below, not yet settled, that reach it. */
  private readonly waiting = new Map<number, Map<string, number>>();
  /** The last level this graph follows. */
  readonly end: number;
  /** Cells of the graph not yet settled. */
  private outstanding: number;

  /** `levels`: the build's levels from 0 (a shard's build follows level 0 alone: 1). */
  constructor(private readonly plan: BuildPlan, private readonly halfExtent: number, readonly start: number, cells: readonly string[], levels: number) {
    let level = start;
    let current = [...cells];
    this.outstanding = current.length;
    while (level + 1 < levels && this.narrow(level)) {
      const above = new Map<string, number>();
      for (const key of current) for (const k of this.reach(level, key)) above.set(k, (above.get(k) ?? 0) + 1);
      this.waiting.set(++level, above);
      current = [...above.keys()];
      this.outstanding += current.length;
    }
    this.end = level;
  }

  /** The margin a cell of `level` reaches into the level above, in pixels, and that level's cell side. */
  private margin(level: number): { margin: number; above: number; n: number } {
    const n = 2 ** this.plan.levels[level + 1].zoom;
    const above = this.plan.world.side / n;
    return { margin: this.halfExtent + above / 16, above, n };
  }

  /** Whether a cell of `level` reaches at most two cells of the level above along each axis. */
  private narrow(level: number): boolean {
    const { margin, above } = this.margin(level);
    return margin <= above / 2;
  }

  /** Cells of level `level + 1` that the cell `key` of `level` may send features to. */
  reach(level: number, key: string): string[] {
    const { plane, x, y } = parseUnitKey(key);
    const cell = this.plan.world.side / 2 ** this.plan.levels[level].zoom;
    const { margin, above, n } = this.margin(level);
    const lo = (i: number) => Math.max(0, Math.floor((i * cell - margin) / above));
    const hi = (i: number) => Math.min(n - 1, Math.floor(((i + 1) * cell + margin) / above));
    const prefix = unitKeyPrefix(plane);
    const out: string[] = [];
    for (let cx = lo(x); cx <= hi(x); cx++) for (let cy = lo(y); cy <= hi(y); cy++) out.push(cellKey(prefix, cx, cy));
    return out;
  }

  /** Whether cell `key` of `level` may still receive features. */
  accepts(level: number, key: string): boolean {
    if (level === this.end + 1) return this.outstanding > 0;
    return (this.waiting.get(level)?.get(key) ?? 0) > 0;
  }

  /** How many cells the graph may have: an upper bound of its units. */
  get cells(): number {
    let n = 0;
    for (const w of this.waiting.values()) n += w.size;
    return n;
  }

  /** Every cell of the graph is settled: the level after `end` (if any) is final. */
  get complete(): boolean {
    return this.outstanding === 0;
  }

  /** Marks cell `key` of `level` settled; returns the cells of the level above whose inputs are now final. */
  settle(level: number, key: string): string[] {
    this.outstanding--;
    if (level >= this.end) return [];
    const waiting = this.waiting.get(level + 1) as Map<string, number>;
    const final: string[] = [];
    for (const k of this.reach(level, key)) {
      const left = (waiting.get(k) ?? 0) - 1;
      if (left < 0) throw new Error(`internal: cell ${k} of level ${level + 1} settled more often than it was reached`);
      waiting.set(k, left);
      if (left === 0) final.push(k);
    }
    return final;
  }
}
