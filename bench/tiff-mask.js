// Writes the made-up strip TIFF masks the README's mask figures were measured on: a class mask, or cells numbered afresh per tile.
//
//   node bench/tiff-mask.js class SIZE OUT.tif
//     8 bits, SIZE × SIZE px: three tissue classes (1–3) from bilinear value noise on a grid every 400 px, and 21
//     rarer classes (4–24) in ten round specks each, radius 3–12 px; the same pixels for the same SIZE.
//   node bench/tiff-mask.js afresh SIZE TILE OUT.tif
//     16 bits: round cells of 20 px (radius 8) numbered from 1 afresh in each TILE px tile, as a segmentation run tile
//     by tile writes them.
import fs from 'node:fs';

const ROWS_PER_STRIP = 64;

/** The TIFF head (header, one IFD, strip offsets and counts) of an uncompressed grey strip image. */
function tiffHead(width, height, bits) {
  const strips = Math.ceil(height / ROWS_PER_STRIP), rowBytes = (width * bits) / 8;
  const entries = [[256, 4, width], [257, 4, height], [258, 3, bits], [259, 3, 1], [262, 3, 1], [273, 4, 0], [277, 3, 1], [278, 4, ROWS_PER_STRIP], [279, 4, 0], [339, 3, 1]];
  const ifdAt = 8, ifdBytes = 2 + entries.length * 12 + 4;
  const offAt = ifdAt + ifdBytes, cntAt = offAt + 4 * strips, dataAt = cntAt + 4 * strips;
  const head = Buffer.alloc(dataAt);
  head.write('II', 0);
  head.writeUInt16LE(42, 2);
  head.writeUInt32LE(ifdAt, 4);
  head.writeUInt16LE(entries.length, ifdAt);
  entries.forEach(([tag, type, v], i) => {
    const at = ifdAt + 2 + 12 * i;
    head.writeUInt16LE(tag, at);
    head.writeUInt16LE(type, at + 2);
    if (tag === 273 || tag === 279) {
      head.writeUInt32LE(strips, at + 4);
      head.writeUInt32LE(tag === 273 ? offAt : cntAt, at + 8);
    } else {
      head.writeUInt32LE(1, at + 4);
      if (type === 3) head.writeUInt16LE(v, at + 8);
      else head.writeUInt32LE(v, at + 8);
    }
  });
  for (let s = 0; s < strips; s++) {
    const rows = Math.min(ROWS_PER_STRIP, height - s * ROWS_PER_STRIP);
    head.writeUInt32LE(dataAt + s * ROWS_PER_STRIP * rowBytes, offAt + 4 * s);
    head.writeUInt32LE(rows * rowBytes, cntAt + 4 * s);
  }
  return head;
}

function classMask(size, fd) {
  const W = size, H = size, G = 400;
  let seed = 12345;
  const rnd = () => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed / 0x7fffffff; };
  const gw = Math.ceil(W / G) + 2, gh = Math.ceil(H / G) + 2;
  const grid = new Float32Array(gw * gh).map(() => rnd());
  const specks = [];
  for (let c = 4; c <= 24; c++) for (let k = 0; k < 10; k++) specks.push([Math.floor(rnd() * W), Math.floor(rnd() * H), 3 + Math.floor(rnd() * 10), c]);
  fs.writeSync(fd, tiffHead(W, H, 8));
  const rows = new Uint8Array(W * ROWS_PER_STRIP);
  for (let y0 = 0; y0 < H; y0 += ROWS_PER_STRIP) {
    const n = Math.min(ROWS_PER_STRIP, H - y0);
    for (let r = 0; r < n; r++) {
      const y = y0 + r, gy = Math.floor(y / G), fy = (y % G) / G;
      for (let x = 0; x < W; x++) {
        const gx = Math.floor(x / G), fx = (x % G) / G;
        const a = grid[gy * gw + gx], b = grid[gy * gw + gx + 1], c = grid[(gy + 1) * gw + gx], d = grid[(gy + 1) * gw + gx + 1];
        const v = (a * (1 - fx) + b * fx) * (1 - fy) + (c * (1 - fx) + d * fx) * fy;
        rows[r * W + x] = v < 0.3 ? 0 : v < 0.55 ? 1 : v < 0.7 ? 2 : 3;
      }
    }
    for (const [sx, sy, sr, c] of specks) {
      for (let y = Math.max(y0, sy - sr); y < Math.min(y0 + n, sy + sr + 1); y++) {
        for (let x = Math.max(0, sx - sr); x < Math.min(W, sx + sr + 1); x++) if ((x - sx) ** 2 + (y - sy) ** 2 <= sr * sr) rows[(y - y0) * W + x] = c;
      }
    }
    fs.writeSync(fd, rows.subarray(0, n * W));
  }
}

function afreshMask(size, tile, fd) {
  const W = size, H = size, per = tile / 20;
  fs.writeSync(fd, tiffHead(W, H, 16));
  const row = new Uint16Array(W);
  for (let y = 0; y < H; y++) {
    const cy = y % tile, r = Math.floor(cy / 20), dy = (cy % 20) - 10;
    row.fill(0);
    for (let x = 0; x < W; x++) {
      const cx = x % tile, c = Math.floor(cx / 20), dx = (cx % 20) - 10;
      if (dx * dx + dy * dy <= 64) row[x] = r * per + c + 1;
    }
    fs.writeSync(fd, new Uint8Array(row.buffer));
  }
}

const [kind, ...rest] = process.argv.slice(2);
const usage = 'usage: node bench/tiff-mask.js class SIZE OUT.tif | node bench/tiff-mask.js afresh SIZE TILE OUT.tif';
if ((kind !== 'class' || rest.length !== 2) && (kind !== 'afresh' || rest.length !== 3)) {
  console.error(usage);
  process.exit(2);
}
const size = Number(rest[0]), tile = kind === 'afresh' ? Number(rest[1]) : 0;
if (!Number.isInteger(size) || size < 1 || (kind === 'afresh' && (!Number.isInteger(tile) || tile < 20 || tile % 20 !== 0))) {
  console.error(`${usage}\nSIZE: a whole number of pixels; TILE: a multiple of 20`);
  process.exit(2);
}
const fd = fs.openSync(rest[rest.length - 1], 'w');
if (kind === 'class') classMask(size, fd);
else afreshMask(size, tile, fd);
fs.closeSync(fd);
