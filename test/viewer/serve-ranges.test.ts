// serve's header rules (byte ranges, If-Range, Accept-Encoding) and its routing of tile paths to archives, as pure functions.
import { describe, expect, it } from 'vitest';
import { acceptsGzip, answerFor, byteRange, contentValidators, dateIsStrong, ifRangeHolds, validators } from '../../src/serve/ranges.js';
import { archiveFor, descriptorPlane, pyramidTile, tileRequest, tileRoutes } from '../../src/serve/tile-routes.js';

describe('byteRange', () => {
  it('reads one range, an open end, a suffix, and cuts an end past the file', () => {
    expect(byteRange('bytes=0-9', 100)).toEqual({ start: 0, end: 9 });
    expect(byteRange('bytes=90-', 100)).toEqual({ start: 90, end: 99 });
    expect(byteRange('bytes=-10', 100)).toEqual({ start: 90, end: 99 });
    expect(byteRange('bytes=-1000', 100)).toEqual({ start: 0, end: 99 });
    // What a PMTiles reader asks first: 16 KiB from 0, of an archive that may be smaller.
    expect(byteRange('bytes=0-16383', 679)).toEqual({ start: 0, end: 678 });
    expect(byteRange('BYTES = 5-5', 100)).toEqual({ start: 5, end: 5 });
  });

  it('answers several ranges with the one range spanning those inside the file', () => {
    expect(byteRange('bytes=0-4, 20-29', 100)).toEqual({ start: 0, end: 29 });
    expect(byteRange('bytes=50-59,-5,200-300', 100)).toEqual({ start: 50, end: 99 });
    // A range starting past the end is left out whether its end is given or open; empty list elements are allowed.
    expect(byteRange('bytes=0-1,105-', 100)).toEqual({ start: 0, end: 1 });
    expect(byteRange('bytes=0-1,105-110', 100)).toEqual({ start: 0, end: 1 });
    expect(byteRange('bytes=0-1,,5-9', 100)).toEqual({ start: 0, end: 9 });
    expect(byteRange('bytes=, 3-4', 100)).toEqual({ start: 3, end: 4 });
  });

  it('is unsatisfiable (416) when no range starts inside the file or the set is malformed', () => {
    for (const h of ['bytes=100-', 'bytes=100-200', 'bytes=-0', 'bytes=5-2', 'bytes=abc', 'bytes=', 'bytes=-', 'bytes=1-2-3', 'bytes=0-1,x', 'bytes=+1-2', 'bytes=99999999999999999999-']) {
      expect(byteRange(h, 100), h).toBe('unsatisfiable');
    }
    expect(byteRange('bytes=0-', 0)).toBe('unsatisfiable');
  });

  it('ignores other units and no header (the whole file)', () => {
    expect(byteRange(undefined, 100)).toBeUndefined();
    expect(byteRange('items=0-1', 100)).toBeUndefined();
    expect(byteRange('0-1', 100)).toBeUndefined();
  });
});

describe('validators and If-Range', () => {
  const stats = { size: 1000, mtimeMs: 1_700_000_000_123.4, ino: 42, mtime: new Date(1_700_000_000_123) };
  const v = validators(stats);

  it('gives a strong tag that changes with size, time and inode', () => {
    expect(v.etag).toMatch(/^"[0-9a-f]+-[0-9a-f]+-[0-9a-f]+"$/);
    expect(validators({ ...stats, ino: 43 }).etag).not.toBe(v.etag);
    expect(validators({ ...stats, size: 1001 }).etag).not.toBe(v.etag);
    expect(validators({ ...stats, mtimeMs: stats.mtimeMs + 1 }).etag).not.toBe(v.etag);
    expect(v.lastModified).toBe('Tue, 14 Nov 2023 22:13:20 GMT');
    expect(v.modifiedMs).toBe(stats.mtimeMs);
  });

  it('holds for no header or the same tag; never for another tag, a weak one or a date, even the Last-Modified', () => {
    expect(ifRangeHolds(undefined, v)).toBe(true);
    expect(ifRangeHolds(v.etag, v)).toBe(true);
    expect(ifRangeHolds(v.lastModified, v)).toBe(false);
    expect(ifRangeHolds('"other"', v)).toBe(false);
    expect(ifRangeHolds(`W/${v.etag}`, v)).toBe(false);
    expect(ifRangeHolds('Tue, 14 Nov 2023 22:13:21 GMT', v)).toBe(false);
    expect(ifRangeHolds('not a date', v)).toBe(false);
  });
});

describe('answerFor: preconditions, then ranges', () => {
  const v = validators({ size: 1000, mtimeMs: 1_700_000_000_123.4, ino: 42, mtime: new Date(1_700_000_000_123) });
  const later = 'Tue, 14 Nov 2023 22:13:21 GMT', earlier = 'Tue, 14 Nov 2023 22:13:19 GMT';
  // An hour after the change: the Last-Modified date is a strong validator.
  const answer = (h: Parameters<typeof answerFor>[1], method = 'GET', now = 1_700_003_600_000) => answerFor(method, h, v, 1000, now);

  it('answers a revalidation that still matches with 304: the tag (weakly, in a list, *), else the date', () => {
    for (const ifNoneMatch of [v.etag, `W/${v.etag}`, `"x", ${v.etag}`, '*']) expect(answer({ ifNoneMatch }), ifNoneMatch).toEqual({ status: 304 });
    expect(answer({ ifNoneMatch: v.etag }, 'HEAD')).toEqual({ status: 304 });
    expect(answer({ ifModifiedSince: v.lastModified })).toEqual({ status: 304 });
    expect(answer({ ifModifiedSince: later })).toEqual({ status: 304 });
    // A tag given decides alone: another tag is a change, whatever the date says.
    expect(answer({ ifNoneMatch: '"other"', ifModifiedSince: later })).toEqual({ status: 200 });
    expect(answer({ ifModifiedSince: earlier })).toEqual({ status: 200 });
    expect(answer({ ifModifiedSince: 'not a date' })).toEqual({ status: 200 });
  });

  it('holds a date against the exact time within a second of the change, when the file may have changed again since', () => {
    // Changed at 22:13:20.123: a copy dated 22:13:20 may be older, so it is not confirmed; 22:13:21 is after the change.
    const soon = 1_700_000_000_623;
    expect(dateIsStrong(v, soon)).toBe(false);
    expect(dateIsStrong(v, 1_700_000_001_200)).toBe(true);
    expect(answer({ ifModifiedSince: v.lastModified }, 'GET', soon)).toEqual({ status: 200 });
    expect(answer({ ifModifiedSince: later }, 'GET', soon)).toEqual({ status: 304 });
    expect(answer({ ifUnmodifiedSince: v.lastModified }, 'GET', soon)).toEqual({ status: 412 });
    expect(answer({ ifUnmodifiedSince: later }, 'GET', soon)).toEqual({ status: 200 });
    // A second later the same date is the file's own Last-Modified again.
    expect(answer({ ifModifiedSince: v.lastModified }, 'GET', 1_700_000_001_200)).toEqual({ status: 304 });
  });

  it('fails (412) an If-Match of another or a weak tag, and an If-Unmodified-Since before the last change', () => {
    expect(answer({ ifMatch: '"nope"' })).toEqual({ status: 412 });
    expect(answer({ ifMatch: `W/${v.etag}` })).toEqual({ status: 412 });
    expect(answer({ ifUnmodifiedSince: earlier })).toEqual({ status: 412 });
    expect(answer({ ifMatch: v.etag, range: 'bytes=0-9' })).toEqual({ status: 206, range: { start: 0, end: 9 } });
    expect(answer({ ifMatch: '*' })).toEqual({ status: 200 });
    expect(answer({ ifUnmodifiedSince: later })).toEqual({ status: 200 });
    // An If-Match given decides alone; an unreadable date is no precondition.
    expect(answer({ ifMatch: v.etag, ifUnmodifiedSince: earlier })).toEqual({ status: 200 });
    expect(answer({ ifUnmodifiedSince: 'soon' })).toEqual({ status: 200 });
  });

  it('then serves the range of a GET (not of a HEAD) when If-Range holds', () => {
    expect(answer({ range: 'bytes=10-19' })).toEqual({ status: 206, range: { start: 10, end: 19 } });
    expect(answer({ range: 'bytes=10-19' }, 'HEAD')).toEqual({ status: 200 });
    expect(answer({ range: 'bytes=10-19', ifRange: '"other"' })).toEqual({ status: 200 });
    expect(answer({ range: 'bytes=2000-' })).toEqual({ status: 416 });
    expect(answer({})).toEqual({ status: 200 });
  });

  it('tags bytes made on request by their content', () => {
    const a = contentValidators(Buffer.from('tile a'), new Date(1_700_000_000_000));
    expect(a.etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(contentValidators(Buffer.from('tile a'), new Date(0)).etag).toBe(a.etag);
    expect(contentValidators(Buffer.from('tile b'), new Date(1_700_000_000_000)).etag).not.toBe(a.etag);
    expect(a.lastModified).toBe('Tue, 14 Nov 2023 22:13:20 GMT');
  });
});

describe('acceptsGzip', () => {
  it('takes gzip named or under *, with a weight above 0', () => {
    for (const h of ['gzip', 'gzip, deflate, br', 'br;q=1.0, gzip;q=0.5', 'x-gzip', '*', 'br, *;q=0.1', 'GZIP']) expect(acceptsGzip(h), h).toBe(true);
    for (const h of [undefined, '', 'identity', 'br, deflate', 'gzip;q=0', 'gzip;q=0, *', '*;q=0', 'gzip;q=0.000']) expect(acceptsGzip(h), String(h)).toBe(false);
  });
});

describe('tile routes', () => {
  const descriptor = {
    tiles: ['{zlvl}/{c}/{z}/{x}/{y}.pbf'],
    bounds: [0, 0, 0, 0, 0, 0, 1, 2, 2012, 1342],
    assets: [
      { role: 'tiles', href: 'tiles-c0-z0.pbf.pmtiles', media_type: 'application/vnd.pmtiles', format: 'pbf', c: 0, z: 0 },
      { role: 'tiles', href: 'tiles-c0-z0.json.pmtiles', media_type: 'application/vnd.pmtiles', format: 'json', c: 0, z: 0 },
      { role: 'tiles', href: 'sub/tiles-c1-z2.pbf.pmtiles', media_type: 'application/vnd.pmtiles', format: 'pbf', c: 1, z: 2 },
      // A URL reference: percent-decoded to name the file, as a browser resolving it would; one that does not decode is none.
      { role: 'tiles', href: 'my%20tiles%231.pbf.pmtiles', media_type: 'application/vnd.pmtiles', format: 'pbf', c: 2, z: 0 },
      { role: 'tiles', href: 'bad%zz.pbf.pmtiles', media_type: 'application/vnd.pmtiles', format: 'pbf', c: 3, z: 0 },
      // Not routes: another role, another media type, an unknown format, a URL, an absolute path, a query.
      { role: 'raster', href: 'preview.pmtiles', media_type: 'application/vnd.pmtiles', format: 'pbf' },
      { role: 'tiles', href: 'x.pbf', media_type: 'application/x-protobuf', format: 'pbf' },
      { role: 'tiles', href: 'x.pmtiles', media_type: 'application/vnd.pmtiles', format: 'mvt' },
      { role: 'tiles', href: 'https://cdn.example/x.pmtiles', media_type: 'application/vnd.pmtiles', format: 'pbf' },
      { role: 'tiles', href: '/etc/x.pmtiles', media_type: 'application/vnd.pmtiles', format: 'pbf' },
      { role: 'tiles', href: 'x.pmtiles?v=1', media_type: 'application/vnd.pmtiles', format: 'pbf' },
      null, 'tiles',
    ],
  };

  it('lists the archives of a descriptor with their plane and format, and its plane dimensions', () => {
    const routes = tileRoutes(descriptor);
    expect(routes.dims).toEqual(['c', 'z']);
    expect(routes.archives).toEqual([
      { segments: ['tiles-c0-z0.pbf.pmtiles'], format: 'pbf', plane: { c: 0, z: 0 } },
      { segments: ['tiles-c0-z0.json.pmtiles'], format: 'json', plane: { c: 0, z: 0 } },
      { segments: ['sub', 'tiles-c1-z2.pbf.pmtiles'], format: 'pbf', plane: { c: 1, z: 2 } },
      { segments: ['my tiles#1.pbf.pmtiles'], format: 'pbf', plane: { c: 2, z: 0 } },
    ]);
    expect(routes.zooms).toEqual([0, 26]);
    expect(routes.planes).toEqual({ low: { t: 0, c: 0, z: 0 }, high: { t: 0, c: 1, z: 2 } });
    for (const d of [undefined, null, [], 'x', { assets: 'x' }]) {
      expect(tileRoutes(d)).toEqual({ dims: [], archives: [], zooms: [0, 26], planes: { low: {}, high: {} } });
    }
    expect(tileRoutes({ minzoom: 2, maxzoom: 5, bounds: [0, 0, 10, 10] })).toMatchObject({ zooms: [2, 5], planes: { low: {}, high: {} } });
    // The spec's 2D example names the zoom {z}: without {zlvl}, a first {z} is the zoom.
    expect(tileRoutes({ tiles: ['{z}/{x}/{y}.pbf'] }).dims).toEqual([]);
    expect(tileRoutes({ tiles: ['{z}/{c}/{z}/{x}/{y}.pbf'] }).dims).toEqual(['c', 'z']);
    expect(tileRoutes({ tiles: ['https://host/{zlvl}/{t}/{x}/{y}.pbf'] }).dims).toEqual(['t']);
  });

  it('knows the tiles a pyramid may hold: its layout, zooms and planes', () => {
    const routes = tileRoutes({ ...descriptor, minzoom: 1, maxzoom: 3 });
    expect(pyramidTile(['2', '1', '2', '3', '0.pbf'], routes)).toEqual({ z: 2, x: 3, y: 0, plane: { c: 1, z: 2 }, ext: 'pbf' });
    for (const s of [['0', '0', '0', '0', '0.pbf'], ['4', '0', '0', '0', '0.pbf'], ['2', '2', '0', '0', '0.pbf'], ['2', '0', '3', '0', '0.pbf'], ['2', '0', '0', '0.pbf']]) {
      expect(pyramidTile(s, routes), s.join('/')).toBeUndefined();
    }
  });

  it('reads tile paths of the pattern, and nothing else', () => {
    expect(tileRequest(['2', '1', '2', '3', '0.pbf'], ['c', 'z'])).toEqual({ z: 2, x: 3, y: 0, plane: { c: 1, z: 2 }, ext: 'pbf' });
    expect(tileRequest(['0', '0', '0.json'], [])).toEqual({ z: 0, x: 0, y: 0, plane: {}, ext: 'json' });
    for (const s of [['2', '1', '3', '0.pbf'], ['2', '1', '2', '3', '0.png'], ['2', '01', '2', '3', '0.pbf'], ['2', '1', '2', '4', '0.pbf'], ['27', '1', '2', '0', '0.pbf'], ['a', '1', '2', '0', '0.pbf'], ['2', '1', '2', '3', '0.pbf.tmp-1']]) {
      expect(tileRequest(s, ['c', 'z']), s.join('/')).toBeUndefined();
    }
  });

  it('reads any plane index a build writes, as a timestamp t of ten digits', () => {
    expect(tileRequest(['1', '1700000000', '0', '1.pbf'], ['t'])).toEqual({ z: 1, x: 0, y: 1, plane: { t: 1700000000 }, ext: 'pbf' });
    // A plane index is a safe integer (as a descriptor's bounds and a feature's plane are): beyond, no tile.
    expect(tileRequest(['1', '9007199254740993', '0', '1.pbf'], ['t'])).toBeUndefined();
  });

  it('finds the archive of a tile by plane and format', () => {
    const { archives } = tileRoutes(descriptor);
    const find = (path: string[]) => archiveFor(archives, tileRequest(path, ['c', 'z']) as NonNullable<ReturnType<typeof tileRequest>>)?.segments.join('/');
    expect(find(['1', '0', '0', '1', '1.pbf'])).toBe('tiles-c0-z0.pbf.pmtiles');
    expect(find(['1', '0', '0', '1', '1.json'])).toBe('tiles-c0-z0.json.pmtiles');
    expect(find(['1', '1', '2', '1', '1.pbf'])).toBe('sub/tiles-c1-z2.pbf.pmtiles');
    expect(find(['1', '1', '2', '1', '1.json'])).toBeUndefined();
    expect(find(['1', '1', '1', '1', '1.pbf'])).toBeUndefined();
  });

  it('takes the plane of a one-plane descriptor from its 10-number bounds', () => {
    expect(descriptorPlane({ tiles: ['{zlvl}/{c}/{x}/{y}.pbf'], bounds: [0, 3, 0, 0, 0, 0, 3, 0, 100, 100] })).toEqual({ c: 3 });
    expect(descriptorPlane({ tiles: ['{zlvl}/{x}/{y}.pbf'], bounds: [0, 0, 100, 100] })).toEqual({});
    expect(descriptorPlane(null)).toEqual({});
  });
});
