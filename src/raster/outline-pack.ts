// Outlines held between bands of a mask at 4 bytes a vertex: runs along pixel edges change one coordinate a vertex.

/**
 * Numbers `pack` writes for a run of `n` vertices: its first vertex, whether its first edge runs along x (1) or y (0),
 * then the coordinate each further vertex changes. Consecutive vertices of an outline, or of a run of one, differ in
 * one coordinate, x and y in turn, so half of the numbers are the ones before them.
 */
export function packedSize(n: number): number {
  return n + 2;
}

/** Packs `n` vertices of `xy` from vertex `s`, `dy` added to each y, into `out` from `at`; returns where it ends. */
export function pack(xy: Int32Array, s: number, n: number, dy: number, out: Int32Array, at: number): number {
  const o = 2 * s;
  const along = n > 1 && xy[o + 3] === xy[o + 1] ? 1 : 0;
  out[at++] = xy[o];
  out[at++] = xy[o + 1] + dy;
  out[at++] = along;
  // Vertex i changes x when the edge into it runs along x: every other one, from the first edge's way.
  for (let i = 1; i < n; i++) out[at++] = (i & 1) === along ? xy[o + 2 * i] : xy[o + 2 * i + 1] + dy;
  return at;
}

/** Writes the `n` vertices packed in `data` from `at` into `xy` from position `o` (in positions); returns where they end. */
export function unpack(data: Int32Array, at: number, n: number, xy: Int32Array, o: number): number {
  let x = data[at++], y = data[at++], w = 2 * o;
  const along = data[at++];
  xy[w++] = x; xy[w++] = y;
  for (let i = 1; i < n; i++) {
    if ((i & 1) === along) x = data[at++]; else y = data[at++];
    xy[w++] = x; xy[w++] = y;
  }
  return o + n;
}
