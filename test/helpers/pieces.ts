// Counting a label image's pieces apart from src/raster/: a flood fill, to compare the trace's figures with.

/** 4-connected pieces of one nonzero value in an image `width` wide, and their pixels. */
export function piecesOf(data: ArrayLike<number>, width: number): { pieces: number; pixels: number } {
  const n = data.length, seen = new Uint8Array(n), stack = new Int32Array(n);
  let pieces = 0, pixels = 0;
  for (let start = 0; start < n; start++) {
    if (seen[start] || data[start] === 0) continue;
    pieces++;
    const v = data[start];
    let top = 0;
    stack[top++] = start;
    seen[start] = 1;
    while (top > 0) {
      const i = stack[--top], x = i % width;
      pixels++;
      const visit = (j: number) => { if (!seen[j] && data[j] === v) { seen[j] = 1; stack[top++] = j; } };
      if (x > 0) visit(i - 1);
      if (x + 1 < width) visit(i + 1);
      if (i >= width) visit(i - width);
      if (i + width < n) visit(i + width);
    }
  }
  return { pieces, pixels };
}

/** A square of 16-bit noise of side `w` (a camera's dark frame) drawn from `rnd`, and the start of the reason a mask of it is refused. */
export function noise16(w: number, rnd: () => number): { data: Uint16Array; reason: string } {
  const data = new Uint16Array(w * w);
  for (let i = 0; i < data.length; i++) data[i] = Math.floor(rnd() * 65536);
  const labels = new Set(data.filter((v) => v !== 0)).size, { pieces, pixels } = piecesOf(data, w);
  const n = (v: number) => v.toLocaleString('en-US');
  // Its few zeros (background) border a handful of edges out of 80,000: 100% after rounding.
  const reason = `${n(labels)} labels in ${n(pieces)} separate pieces of on average ${(pixels / pieces).toFixed(1)} px, 100% of their outlines against another label rather than background: `
    + 'this looks like an intensity image, not a label mask (one integer label per object, 0 background)';
  return { data, reason };
}
