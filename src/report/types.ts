// What a build reports: progress events while it runs and the run report (build-report.json) at the end.
import type { Dim } from '../tiling/space.js';
import type { Outliers } from '../stages/plan.js';
import type { IssueSample, SkippedPlace } from '../validate/tally.js';

export type ProgressEvent =
  | { phase: 'read'; file: string; features: number; elapsed: number }
  | { phase: 'tile'; level: number; units: number; unitsTotal: number; tiles: number; bytes: number; elapsed: number }
  | { phase: 'done'; elapsed: number };

export interface FormatCount { tiles: number; bytes: number }
export interface ZoomReport { tiles: number; bytes: number; json: FormatCount; pbf: FormatCount; features: number; pointified: number; thinned: number }

export interface BuildReport {
  features: {
    read: number; valid: number; invalid: number;
    invalidByCode: Record<string, number>;
    warningsByCode: Record<string, number>;
    /** Valid features the pyramid cannot place, by reason (null geometry, mesh only by `tiles`, outside the world). */
    notPlaced: Record<string, number>;
    /** Per reason in `notPlaced`, where the first such feature is (absent from reports of earlier versions). */
    notPlacedFirst?: Record<string, SkippedPlace>;
    /** Valid features a PBF tile cannot hold (meshes), kept in JSON tiles only. */
    jsonOnly: number;
    /** QuPath objects on every channel (plane c -1, or none) in a pyramid with a channel axis: each is in every one of `channels`. */
    everyChannel?: { features: number; channels: number[] };
    samples: IssueSample[];
  };
  world: {
    side: number; width: number; height: number; minZoom: number; maxZoom: number; dims: Dim[]; planes: number; layers: string[];
    /** When a few far features made a world from the data at least 16 times the side the rest need. */
    outliers?: Outliers;
  };
  tiles: {
    total: number; bytes: number;
    byZoom: Record<string, ZoomReport>;
    /** Per layer and zoom: features drawn as points (per tile), not drawn (thinned), share drawn where below 1; thinned and share count a feature of many pieces by its pieces. */
    byLayer: Record<string, { pointified: number[]; thinned: number[]; completeZooms: number[]; keptFraction: Record<string, number> }>;
    largest: { path: string; bytes: number } | null;
    /**
     * Uniform thinning, per zoom: the format the budget holds, the share of the priority range drawn and its threshold
     * (every layer alike), the zooms whose rule was raised after tiling because a tile was still over, and the
     * coarsest zoom that draws lines and polygons 8 display pixels across whatever the share.
     */
    thinning: {
      budgeted: 'pbf' | 'json'; share: number[]; thresholds: number[]; raised: number[]; spareFrom: number; spareSizes?: number[];
      /** The bytes each tile below the finest zoom was held to (`--tile-budget`); null with `--lod none`, which holds none. */
      budget: number | null;
      /** `--coarse-fields`: the only fields tiles below zoom `below` carry (absent: every zoom carries every field). */
      fewFields?: { keep: string[]; below: number };
    };
  };
  units: { levels: number; total: number };
  /** How this run went, which may differ between runs that give the same pyramid (all else in the report may not). */
  run: {
    workers: number; spilled: boolean; resumed: number;
    /** The shards of the plan a sharded build's `finalize` finished (absent for `build`): build-shard and finalize run again go by it. */
    shards?: number;
  };
  timings: Record<string, number>;
}

/** What the line of features a pyramid loses is made of: a report's, or a plan's before any tile is written. */
export type LostCounts = Pick<BuildReport['features'], 'read' | 'invalid' | 'invalidByCode' | 'notPlaced' | 'samples'>;
