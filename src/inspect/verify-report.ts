// verify: build-report.json against the tiles found, returning the problems.
import { decodeJsonBytes, problem, type Problem } from './verify-problems.js';

/** Tiles and bytes found per format at one zoom. */
export interface ZoomCount { json: { tiles: number; bytes: number }; pbf: { tiles: number; bytes: number } }

/**
 * The build report's tile counts (its bytes, undefined when there is none) against the tiles found, per zoom and
 * format. `missing`: zooms said to hold no tile already (zoom-missing), whose counts are not said again.
 */
export function checkReport(bytes: Uint8Array | undefined, counted: Map<number, ZoomCount>, missing: ReadonlySet<number> = new Set()): Problem[] {
  if (bytes === undefined) {
    return [problem('report-missing', 'build-report.json', 'no build-report.json: the pyramid was not finished by a build')];
  }
  let report: unknown;
  try {
    report = decodeJsonBytes(bytes);
  } catch (err) {
    return [problem('report-mismatch', 'build-report.json', `not JSON: ${(err as Error).message}`)];
  }
  const byZoom = (report as { tiles?: { byZoom?: Record<string, Partial<ZoomCount>> } } | null)?.tiles?.byZoom;
  if (!byZoom || typeof byZoom !== 'object') {
    return [problem('report-mismatch', 'build-report.json', 'tiles.byZoom is missing')];
  }
  const out: Problem[] = [];
  const zooms = new Set([...Object.keys(byZoom).map(Number), ...counted.keys()]);
  for (const z of [...zooms].sort((a, b) => a - b)) {
    if (missing.has(z)) continue;
    const r = byZoom[z] ?? {};
    const c = counted.get(z) ?? { json: { tiles: 0, bytes: 0 }, pbf: { tiles: 0, bytes: 0 } };
    // The zoom-0 JSON tiles are replaced by the overview descriptors after they are counted: left out.
    for (const f of z === 0 ? (['pbf'] as const) : (['pbf', 'json'] as const)) {
      const want = r[f] ?? { tiles: 0, bytes: 0 };
      if (want.tiles !== c[f].tiles || want.bytes !== c[f].bytes) {
        out.push(problem('report-mismatch', 'build-report.json', `zoom ${z} ${f}: the report says ${want.tiles} tiles, ${want.bytes} bytes; found ${c[f].tiles} tiles, ${c[f].bytes} bytes`));
      }
    }
  }
  return out;
}
