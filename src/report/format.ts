// Human-readable renderings of build progress and of the run report; pure, so the CLI only decides where they go.
import type { Removal } from '../io/written.js';
import { isArchiveFile } from '../options.js';
import { placeText, sampleLine, skippedText } from '../validate/tally.js';
import type { BuildReport, LostCounts, ProgressEvent } from './types.js';
import type { Outliers } from '../stages/plan.js';
import { SPARED_PIXELS } from '../stages/thinning.js';

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(2)} GiB`;
}

function formatSeconds(s: number): string {
  if (!Number.isFinite(s) || s < 0) return '?';
  if (s < 60) return `${s.toFixed(0)}s`;
  return `${Math.floor(s / 60)}m${String(Math.round(s % 60)).padStart(2, '0')}s`;
}

/** One status line for a terminal: what is happening, how fast, and (while tiling) when it should end. */
export function progressLine(e: ProgressEvent): string {
  switch (e.phase) {
    case 'read':
      return `reading ${e.file}: ${e.features.toLocaleString('en-US')} features, ${Math.round(e.features / Math.max(e.elapsed, 1e-3)).toLocaleString('en-US')}/s`;
    case 'tile': {
      const rate = e.tiles / Math.max(e.elapsed, 1e-3);
      const frac = e.unitsTotal > 0 ? e.units / e.unitsTotal : 1;
      const eta = frac > 0 && frac < 1 ? (e.elapsed * (1 - frac)) / frac : 0;
      return `tiling level ${e.level}: unit ${e.units}/${e.unitsTotal}, ${e.tiles.toLocaleString('en-US')} tiles (${formatBytes(e.bytes)}), ${Math.round(rate)} tiles/s, ETA ${formatSeconds(eta)}`;
    }
    case 'done':
      return `done in ${formatSeconds(e.elapsed)}`;
  }
}

/** What a world made huge by a few far features means for the build, and what to do about it. */
export function outlierWarning(o: Outliers): string {
  return `the world (${o.side} px a side) is set by ${o.features} of ${o.of} features lying beyond ${o.bulkSide} px, where the rest lie: `
    + `${Math.log2(o.side / o.bulkSide)} zoom levels more than they need; check those features, or pass --image-size W,H to leave out what lies beyond the image`;
}

/**
 * The features a build read that its pyramid does not hold, by reason; undefined when there are none. Even a quiet
 * build says this: a count of lost features is not progress. Where the first invalid one is goes with it: no other
 * line of a quiet run says it, and `plan` has no report to look it up in.
 */
export function lostFeatures(f: LostCounts): string | undefined {
  const notPlaced = Object.values(f.notPlaced).reduce((a, b) => a + b, 0);
  if (f.invalid === 0 && notPlaced === 0) return undefined;
  const parts: string[] = [];
  // Samples come in the order of the input, each file's in turn.
  const first = f.samples.find((s) => s.severity === 'error' && s.feature !== null);
  if (f.invalid > 0) parts.push(`${f.invalid} invalid (${Object.entries(f.invalidByCode).map(([code, n]) => `${code}: ${n}`).join(', ')})${first ? `, the first: ${placeText(first)}` : ''}`);
  if (notPlaced > 0) parts.push(`${notPlaced} not placed (${Object.entries(f.notPlaced).map(([why, n]) => `${why}: ${n}`).join(', ')})`);
  return `${f.invalid + notPlaced} of ${f.read} features are not in the pyramid: ${parts.join('; ')}`;
}

/** The printed summary of a build: features by outcome, tiles and bytes per zoom, the largest tile, time per stage. */
export function summaryLines(r: BuildReport, out: string, step: 'build' | 'finalize' = 'build'): string[] {
  const f = r.features;
  const lines = [
    `pyramid ${out}: ${r.world.layers.length} layer(s) [${r.world.layers.join(', ')}], ${r.world.planes} plane(s)${r.world.dims.length ? ` over ${r.world.dims.join(',')}` : ''}, zooms ${r.world.minZoom}-${r.world.maxZoom}, world ${r.world.side}px (image ${r.world.width}x${r.world.height})`,
    `features: ${f.read} read, ${f.valid} valid, ${f.invalid} invalid`,
  ];
  if (r.world.outliers) lines.splice(1, 0, `  outliers: ${r.world.outliers.features} of ${r.world.outliers.of} features beyond ${r.world.outliers.bulkSide} px set the world`);
  for (const [code, n] of Object.entries(f.invalidByCode)) lines.push(`  invalid ${code}: ${n}`);
  // With each count, where to look first: the first sample of a warning, the first feature not placed for a reason.
  for (const [code, n] of Object.entries(f.warningsByCode)) {
    lines.push(`  warning ${code}: ${n}`);
    const first = f.samples.find((s) => s.code === code && s.severity === 'warning');
    if (first && first.feature !== null) lines.push(`    the first: ${sampleLine(first)}`);
  }
  for (const [why, n] of Object.entries(f.notPlaced)) {
    const at = f.notPlacedFirst?.[why];
    lines.push(`  not placed (${why}): ${n}${at ? `, the first: ${skippedText(at)}` : ''}`);
  }
  if (f.jsonOnly) lines.push(`  in JSON tiles only (meshes cannot go into PBF): ${f.jsonOnly}`);
  if (f.everyChannel) lines.push(`  on every channel (QuPath plane c -1, or none), in each of channels ${f.everyChannel.channels.join(', ')}: ${f.everyChannel.features}`);
  // Errors, and what is wrong with a collection itself (one line at most per file, whatever its severity).
  const shown = f.samples.filter((s) => s.severity === 'error' || s.feature === null).slice(0, 5);
  for (const s of shown) lines.push(`  ${sampleLine(s)}`);
  lines.push(`tiles: ${r.tiles.total}, ${formatBytes(r.tiles.bytes)}`);
  lines.push('  zoom   json tiles      json bytes   pbf tiles       pbf bytes   features  points  thinned');
  for (const [z, zr] of Object.entries(r.tiles.byZoom)) {
    lines.push(`  ${z.padStart(4)} ${String(zr.json.tiles).padStart(11)} ${formatBytes(zr.json.bytes).padStart(15)} ${String(zr.pbf.tiles).padStart(11)} ${formatBytes(zr.pbf.bytes).padStart(15)} ${String(zr.features).padStart(10)} ${String(zr.pointified).padStart(7)} ${String(zr.thinned).padStart(8)}`);
  }
  // Without thinning (--lod none) a zoom draws less than every feature where nothing of the small ones is left.
  const why = r.tiles.thinning.share.some((s) => s < 1) ? 'thinned uniformly' : 'features too small for a zoom left out';
  for (const [id, l] of Object.entries(r.tiles.byLayer)) {
    const kept = Object.entries(l.keptFraction).map(([z, f]) => `${z}: ${Number((f * 100).toPrecision(2))}%`).join(', ');
    lines.push(`  layer ${id}: complete at zooms ${l.completeZooms.join(',') || 'none'}${kept ? `; ${why}, share drawn at zoom ${kept}` : ''}`);
  }
  const { spareFrom, spareSizes = [] } = r.tiles.thinning;
  const thinned = Object.values(r.tiles.byLayer).some((l) => Object.keys(l.keptFraction).length > 0);
  // Zooms crowded with large outlines (a class mask's regions) spare only the larger ones: which, per zoom.
  const larger = spareSizes.map((px, z) => [z, px]).filter(([z, px]) => z >= Math.max(spareFrom, r.world.minZoom) && z < r.world.maxZoom && px > SPARED_PIXELS);
  if (thinned && larger.length > 0) {
    lines.push(`  lines and polygons (or pieces of one) drawn whatever the share where this many display pixels across or more (${SPARED_PIXELS} elsewhere): ${larger.map(([z, px]) => `zoom ${z}: ${px}`).join(', ')}`);
  }
  if (spareFrom > r.world.minZoom && thinned) {
    lines.push(`  lines and polygons ${SPARED_PIXELS} display pixels across or more: drawn whatever the share from zoom ${spareFrom}, thinned with the rest below (too many for the budget there)`);
  }
  if (r.tiles.largest) lines.push(`  largest tile: ${r.tiles.largest.path} (${formatBytes(r.tiles.largest.bytes)})`);
  const t = r.timings;
  // finalize tiles the levels above the shards' after `plan` read the input in another process: its own time is apart.
  const times = step === 'finalize'
    ? `finalize ${t.total.toFixed(2)}s (tile+write ${t.tile.toFixed(2)}s, describe ${t.describe.toFixed(2)}s; plan read the input in ${t.read.toFixed(2)}s)`
    : `read ${t.read.toFixed(2)}s, tile+write ${t.tile.toFixed(2)}s, describe ${t.describe.toFixed(2)}s, total ${t.total.toFixed(2)}s`;
  lines.push(`time: ${times} with ${r.run.workers} worker(s); ${r.units.total} work unit(s) in ${r.units.levels} level(s)${r.run.spilled ? ', spilled to disk' : ''}${r.run.resumed ? `, ${r.run.resumed} resumed` : ''}`);
  return lines;
}

/** What --force removed from OUT, for the log; undefined when there was nothing to remove. */
export function removalLine(r: Removal, out: string): string | undefined {
  if (r.files === 0 && r.dirs === 0) return undefined;
  // -o FILE.pmtiles: the archive and its report, files beside each other, not a directory's contents.
  if (isArchiveFile(out) && r.dirs === 0) return `--force: removed what an earlier build wrote: ${r.touched.join(', ')}`;
  const kept = r.keptCount > 0 ? `; kept ${r.keptCount} entr${r.keptCount === 1 ? 'y' : 'ies'} no build wrote among them (${r.kept.join(', ')}${r.keptCount > r.kept.length ? ', ...' : ''})` : '';
  return `--force: removed ${r.files} file${r.files === 1 ? '' : 's'} and ${r.dirs} director${r.dirs === 1 ? 'y' : 'ies'} an earlier build wrote in ${out} (${r.touched.join(', ')})${kept}`;
}
