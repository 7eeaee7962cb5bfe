// finalize's --memory-budget through main(): taken, said in its help, and bounding what finalize holds of the levels above.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/main.js';
import { memoryIO } from '../../src/cli/io.js';
import { SpillingStore } from '../../src/stages/partition.js';
import { tmpDir } from '../helpers/pyramid.js';

/** 40 squares over a 1024-px slide, in cells of 256 px: level 0 at zoom 2, and levels above it that finalize tiles. */
function slide(dir: string): string {
  const features = Array.from({ length: 40 }, (_, i) => {
    const x = 20 + (i % 8) * 120, y = 20 + Math.floor(i / 8) * 190;
    return { type: 'Feature', id: i, properties: {}, geometry: { type: 'Polygon', coordinates: [[[x, y], [x + 30, y], [x + 30, y + 30], [x, y + 30], [x, y]]] } };
  });
  const file = path.join(dir, 'cells.json');
  fs.writeFileSync(file, JSON.stringify({ type: 'FeatureCollection', features }));
  return file;
}

async function cli(args: string[]): Promise<{ code: number; err: string; out: string }> {
  const io = memoryIO();
  const code = await main(args, io);
  return { code, err: io.err(), out: io.out() };
}

/** A planned build of `input` whose one shard is tiled: what finalize takes. */
async function planned(input: string, out: string): Promise<void> {
  for (const args of [['plan', input, '-o', out, '--unit-size', '256', '--image-size', '1024,1024', '--format', 'pbf'], ['build-shard', out, '--shard', '0']]) {
    const r = await cli([...args, '-q', '--workers', '1']);
    expect([r.code, r.err], args[0]).toEqual([0, '']);
  }
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('finalize --memory-budget', () => {
  it('is taken, and bounds the records of the levels above that finalize holds in memory: past a tenth of it they spill', async () => {
    const dir = tmpDir('mudm-finalize');
    const input = slide(dir);
    const help = memoryIO();
    expect(await main(['finalize', '--help'], help)).toBe(0);
    expect(help.out().replace(/\s+/g, ' ')).toContain('--memory-budget BYTES peak memory to stay under while the coarse zooms are tiled: the work units handed to workers hold at most a tenth of it in records at once (a heavier unit goes alone), and the records they hand up to the levels above spill to OUT/.mudm-work beyond another tenth (e.g. 1G, 512M) (default: 1G)');
    // Two finalizes of one planned build, a copy each.
    const planOut = path.join(dir, 'planned');
    await planned(input, planOut);
    const spilled = async (out: string, budget: string[]) => {
      fs.cpSync(planOut, out, { recursive: true });
      const spill = vi.spyOn(SpillingStore.prototype, 'spill');
      // Refused before (exit 2: finalize took no --memory-budget).
      const r = await cli(['finalize', out, '-q', '--workers', '1', ...budget]);
      expect([r.code, r.err]).toEqual([0, '']);
      const n = spill.mock.calls.length;
      spill.mockRestore();
      // The pyramid is whole either way: every square drawn at the coarsest zoom too.
      const report = JSON.parse(fs.readFileSync(path.join(out, 'build-report.json'), 'utf8')) as { tiles: { byZoom: Record<string, { features: number }> } };
      expect(report.tiles.byZoom['0'].features).toBe(40);
      return n;
    };
    // The default (1G) holds the few records of the levels above in memory; one byte spills them at once.
    expect(await spilled(path.join(dir, 'roomy'), [])).toBe(0);
    expect(await spilled(path.join(dir, 'tight'), ['--memory-budget', '1'])).toBeGreaterThan(0);
  });
});
