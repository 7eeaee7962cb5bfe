// PMTiles encoding: Hilbert tile ids against the `pmtiles` package, the header against its decoder, directories per the spec.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { bytesToHeader, tileIdToZxy as refTileIdToZxy, zxyToTileId as refZxyToTileId } from 'pmtiles';
import {
  Compression, HEADER_BYTES, TileType, decodeDirectory, decodeHeader, encodeDirectory, encodeHeader, findEntry,
  tileCornerLonLat, tileIdToZxy, zxyToTileId, type PmtilesHeader,
} from '../../src/archive/pmtiles-format.js';
import { InputError } from '../../src/report/errors.js';

describe('Hilbert tile ids', () => {
  it('match the spec table', () => {
    expect([[0, 0, 0], [1, 0, 0], [1, 0, 1], [1, 1, 1], [1, 1, 0], [2, 0, 0]].map(([z, x, y]) => zxyToTileId(z, x, y))).toEqual([0, 1, 2, 3, 4, 5]);
    expect(zxyToTileId(12, 3423, 1763)).toBe(19078479);
  });

  it('equal the pmtiles package for every tile of zooms 0..6', () => {
    for (let z = 0; z <= 6; z++) {
      for (let x = 0; x < 2 ** z; x++) {
        for (let y = 0; y < 2 ** z; y++) {
          const id = zxyToTileId(z, x, y);
          if (id !== refZxyToTileId(z, x, y)) expect(id).toBe(refZxyToTileId(z, x, y));
          if (tileIdToZxy(id).join() !== `${z},${x},${y}`) expect(tileIdToZxy(id)).toEqual([z, x, y]);
        }
      }
    }
  });

  it('equal the pmtiles package up to zoom 26 and invert', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 26 }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (z, fx, fy) => {
      const x = Math.floor(fx * 2 ** z);
      const y = Math.floor(fy * 2 ** z);
      const id = zxyToTileId(z, x, y);
      expect(id).toBe(refZxyToTileId(z, x, y));
      expect(tileIdToZxy(id)).toEqual(refTileIdToZxy(id));
      expect(tileIdToZxy(id)).toEqual([z, x, y]);
    }), { numRuns: 2000 });
  });

  it('change zoom exactly at the first id of each zoom', () => {
    for (let z = 1; z <= 26; z++) {
      const first = (4 ** z - 1) / 3;
      expect(tileIdToZxy(first)).toEqual([z, 0, 0]);
      expect(tileIdToZxy(first - 1)[0]).toBe(z - 1);
    }
  });

  it('reject tiles outside their zoom', () => {
    expect(() => zxyToTileId(2, 4, 0)).toThrow(/outside zoom 2/);
    expect(() => zxyToTileId(27, 0, 0)).toThrow(/outside 0..26/);
  });
});

const HEADER: PmtilesHeader = {
  rootDirectoryOffset: 127, rootDirectoryLength: 300, metadataOffset: 427, metadataLength: 50, leafDirectoriesOffset: 477,
  leafDirectoriesLength: 0, tileDataOffset: 477, tileDataLength: 2 ** 40 + 5, addressedTiles: 1_000_000, tileEntries: 999_000,
  tileContents: 998_000, clustered: true, internalCompression: Compression.Gzip, tileCompression: Compression.None,
  tileType: TileType.Mvt, minZoom: 0, maxZoom: 10, minLon: -180, minLat: -85.0511287, maxLon: 12.5, maxLat: 85.0511287,
  centerZoom: 3, centerLon: -83.75, centerLat: 1.25,
};

describe('header', () => {
  it('is 127 bytes that decode to the same fields, here and in the pmtiles package', () => {
    const bytes = encodeHeader(HEADER);
    expect(bytes.length).toBe(HEADER_BYTES);
    expect(decodeHeader(bytes)).toEqual(HEADER);
    const ref = bytesToHeader(bytes.buffer as ArrayBuffer);
    expect(ref).toMatchObject({
      specVersion: 3, rootDirectoryOffset: 127, rootDirectoryLength: 300, jsonMetadataOffset: 427, jsonMetadataLength: 50,
      leafDirectoryOffset: 477, leafDirectoryLength: 0, tileDataOffset: 477, tileDataLength: 2 ** 40 + 5,
      numAddressedTiles: 1_000_000, numTileEntries: 999_000, numTileContents: 998_000, clustered: true,
      internalCompression: 2, tileCompression: 1, tileType: 1, minZoom: 0, maxZoom: 10, minLon: -180, minLat: -85.0511287,
      maxLon: 12.5, maxLat: 85.0511287, centerZoom: 3, centerLon: -83.75, centerLat: 1.25,
    });
  });

  it('is refused, with what was found, when it is not PMTiles v3', () => {
    const bytes = encodeHeader(HEADER);
    expect(() => decodeHeader(bytes.subarray(0, 100))).toThrow(/100 bytes, shorter than the 127-byte header/);
    const v2 = Uint8Array.from(bytes);
    v2[7] = 2;
    expect(() => decodeHeader(v2)).toThrow(/version 2 is not supported/);
    expect(() => decodeHeader(new TextEncoder().encode('{"type":"FeatureCollection"}'.padEnd(127)))).toThrow(InputError);
  });
});

describe('directories', () => {
  const dir = {
    count: 4,
    tileId: Float64Array.from([5, 6, 9, 2 ** 50]),
    offset: Float64Array.from([0, 42, 42, 2 ** 40]),
    length: Uint32Array.from([42, 10, 10, 7]),
    runLength: Uint32Array.from([1, 3, 1, 0]),
  };

  it('encode as the spec says: count, id deltas, run lengths, lengths, offsets (0 = right after the previous)', () => {
    const small = { count: 3, tileId: Float64Array.from([5, 42, 69]), offset: Float64Array.from([0, 10, 5]), length: Uint32Array.from([10, 3, 5]), runLength: Uint32Array.from([1, 1, 2]) };
    expect([...encodeDirectory(small)]).toEqual([3, 5, 37, 27, 1, 1, 2, 10, 3, 5, 1, 0, 6]);
  });

  it('decode to what was encoded, with varints past 32 bits', () => {
    const back = decodeDirectory(encodeDirectory(dir));
    expect(back.count).toBe(4);
    expect([...back.tileId]).toEqual([...dir.tileId]);
    expect([...back.offset]).toEqual([...dir.offset]);
    expect([...back.length]).toEqual([...dir.length]);
    expect([...back.runLength]).toEqual([...dir.runLength]);
  });

  it('encode a range of entries on its own', () => {
    const back = decodeDirectory(encodeDirectory(dir, 1, 3));
    expect([...back.tileId]).toEqual([6, 9]);
    expect([...back.offset]).toEqual([42, 42]);
  });

  it('find a tile inside a run and the leaf that may hold it', () => {
    expect(findEntry(dir, 5)).toBe(0);
    expect(findEntry(dir, 8)).toBe(1);
    expect(findEntry(dir, 4)).toBe(-1);
    expect(findEntry(dir, 10)).toBe(-1);
    expect(findEntry(dir, 2 ** 50 + 99)).toBe(3);
  });

  it('refuse truncated bytes', () => {
    const bytes = encodeDirectory(dir);
    expect(() => decodeDirectory(bytes.subarray(0, bytes.length - 2))).toThrow(/truncated/);
    expect(() => decodeDirectory(Uint8Array.from([200, 1]))).toThrow(/claims 200 entries/);
  });
});

describe('tile corners on the Web Mercator grid', () => {
  it('span the world at zoom 0 and halve it at zoom 1', () => {
    const [w, n] = tileCornerLonLat(0, 0, 0);
    const [e, s] = tileCornerLonLat(0, 1, 1);
    expect([w, e]).toEqual([-180, 180]);
    expect(n).toBeCloseTo(85.0511287798, 8);
    expect(s).toBeCloseTo(-85.0511287798, 8);
    expect(tileCornerLonLat(1, 1, 1)).toEqual([0, 0]);
  });
});
