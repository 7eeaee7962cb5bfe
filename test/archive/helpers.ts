// Test helpers for archives: the `pmtiles` reader (the reference implementation) over bytes, and synthetic tile sets.
import fs from 'node:fs';
import { afterEach } from 'vitest';
import { PMTiles, type Source, type RangeResponse } from 'pmtiles';
import { mulberry32 } from '../../src/random.js';
import { tmpDir } from '../helpers/pyramid.js';

/** A function making a fresh temporary directory, each removed after its test. */
export function scratchDirs(prefix: string): () => string {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });
  return () => {
    const d = tmpDir(prefix);
    dirs.push(d);
    return d;
  };
}

/** A `pmtiles` Source over bytes in memory (the package's own sources are for browsers: fetch and File). */
export class BytesSource implements Source {
  constructor(private readonly bytes: Uint8Array, private readonly key = 'archive.pmtiles') {}
  getKey(): string {
    return this.key;
  }
  async getBytes(offset: number, length: number): Promise<RangeResponse> {
    // A copy: a Buffer's slice shares memory, and its `buffer` may be a larger pool.
    return { data: Uint8Array.from(this.bytes.subarray(offset, offset + length)).buffer };
  }
}

export function referenceReader(bytes: Uint8Array): PMTiles {
  return new PMTiles(new BytesSource(bytes));
}

export interface SyntheticTile { z: number; x: number; y: number; bytes: Uint8Array }

/**
 * Tiles of a small pyramid over zooms 0..maxZoom: every tile of zooms 0..2, then a random `share` of the rest,
 * random lengths, distinct contents; `repeat` of them carry one same content (as tiles inside one big region do).
 */
export function syntheticTiles(seed: number, maxZoom: number, share: number, repeat = 0): SyntheticTile[] {
  const rand = mulberry32(seed);
  const same = new TextEncoder().encode('{"type":"FeatureCollection","features":[]}');
  const out: SyntheticTile[] = [];
  for (let z = 0; z <= maxZoom; z++) {
    const n = 2 ** z;
    for (let x = 0; x < n; x++) {
      for (let y = 0; y < n; y++) {
        if (z > 2 && rand() > share) continue;
        let bytes = same;
        if (rand() >= repeat) {
          // Distinct contents of random lengths: the tile's number, then filler.
          bytes = new Uint8Array(4 + Math.floor(rand() * 300)).fill(out.length % 251);
          new DataView(bytes.buffer).setUint32(0, out.length);
        }
        out.push({ z, x, y, bytes });
      }
    }
  }
  return out;
}

export function shuffled<T>(items: readonly T[], seed: number): T[] {
  const rand = mulberry32(seed);
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

export const METADATA = { tilejson: '3.0.0', name: 'test slide', vector_layers: [{ id: 'cells', fields: { label: 'Number' } }], bounds: [0, 0, 1000, 600] };
