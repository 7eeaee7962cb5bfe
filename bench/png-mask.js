// Writes a large greyscale PNG label mask of cells for timing how PNG masks are read, row by row (a whole 40,000 × 30,000 16-bit mask is 2.4 GB).
// Usage: node bench/png-mask.js OUT.png [--width 20000] [--height 20000] [--bits 16] [--cell 100]
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { createDeflate } from 'node:zlib';

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const out = process.argv[2];
if (out === undefined || out.startsWith('--')) throw new Error('usage: node bench/png-mask.js OUT.png [--width W] [--height H] [--bits 8|16] [--cell PX]');
const width = arg('width', 20_000), height = arg('height', 20_000), bits = arg('bits', 16), cell = arg('cell', 100);
const bytes = bits / 8, rowBytes = width * bytes;
const across = Math.floor(width / cell), down = Math.floor(height / cell);
// 8-bit labels go round 1…255 as cells are numbered; 16-bit ones stay unique up to 65,535 cells.
const most = bits === 8 ? 255 : 65535;

/** A fixed hash of a cell's number to [0, 1): the same mask on every run. */
function hash(n, salt) {
  let t = Math.imul(n ^ (salt * 0x9e3779b9), 0x85ebca6b);
  t ^= t >>> 13; t = Math.imul(t, 0xc2b2ae35); t ^= t >>> 16;
  return (t >>> 0) / 4294967296;
}

/** Each grid cell's ellipse: centre jittered, radii 0.25–0.45 of a cell, so none reaches its neighbours. */
function ellipse(gx, gy) {
  const n = gy * across + gx;
  return {
    label: (n % most) + 1,
    cx: (gx + 0.5 + (hash(n, 1) - 0.5) * 0.1) * cell, cy: (gy + 0.5 + (hash(n, 2) - 0.5) * 0.1) * cell,
    rx: cell * (0.25 + 0.2 * hash(n, 3)), ry: cell * (0.25 + 0.2 * hash(n, 4)),
  };
}

function labelsOfRow(y, row) {
  row.fill(0);
  const gy = Math.floor(y / cell);
  if (gy >= down) return;
  for (let gx = 0; gx < across; gx++) {
    const e = ellipse(gx, gy);
    const dy = (y + 0.5 - e.cy) / e.ry;
    if (dy * dy >= 1) continue;
    const half = e.rx * Math.sqrt(1 - dy * dy);
    for (let x = Math.ceil(e.cx - half - 0.5); x < e.cx + half - 0.5; x++) row[x] = e.label;
  }
}

/** CRC-32 of the PNG specification (polynomial 0xEDB88320), by a table of the 256 byte values. */
const TABLE = Array.from({ length: 256 }, (_, n) => { let c = n; for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1; return c >>> 0; });
function crc(b) { let c = 0xffffffff; for (const v of b) c = TABLE[(c ^ v) & 0xff] ^ (c >>> 8); return (c ^ 0xffffffff) >>> 0; }

function chunk(type, data) {
  const head = Buffer.alloc(8); head.writeUInt32BE(data.length, 0); head.write(type, 4, 'latin1');
  const tail = Buffer.alloc(4); tail.writeUInt32BE(crc(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, tail]);
}

/** Byte i of a row under filter f, from the row's bytes and the row above's. */
function residue(f, raw, prev, i) {
  const a = i >= bytes ? raw[i - bytes] : 0, b = prev[i], c = i >= bytes ? prev[i - bytes] : 0;
  const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
  const predict = f === 0 ? 0 : f === 1 ? a : f === 2 ? b : f === 3 ? (a + b) >> 1 : pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
  return (raw[i] - predict) & 0xff;
}

/**
 * The filter of the five whose bytes sum smallest as signed values, as libpng picks one for each row by default
 * (judged on every 7th byte here, to write 2.4 GB in minutes).
 */
function filtered(raw, prev, line) {
  let best = 0, least = Infinity;
  for (let f = 0; f < 5; f++) {
    let sum = 0;
    for (let i = 0; i < rowBytes; i += 7) { const r = residue(f, raw, prev, i); sum += r < 128 ? r : 256 - r; }
    if (sum < least) { least = sum; best = f; }
  }
  line[0] = best;
  for (let i = 0; i < rowBytes; i++) line[i + 1] = residue(best, raw, prev, i);
}

const file = createWriteStream(out);
const ihdr = Buffer.alloc(13);
ihdr.writeUInt32BE(width, 0); ihdr.writeUInt32BE(height, 4); ihdr[8] = bits; ihdr[9] = 0;
file.write(Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]));
file.write(chunk('IHDR', ihdr));
const deflate = createDeflate({ level: 6 });
deflate.on('data', (d) => { for (let i = 0; i < d.length; i += 1 << 16) file.write(chunk('IDAT', d.subarray(i, i + (1 << 16)))); });
const labels = new Uint16Array(width);
let raw = Buffer.alloc(rowBytes), prev = Buffer.alloc(rowBytes);
for (let y = 0; y < height; y++) {
  labelsOfRow(y, labels);
  for (let x = 0; x < width; x++) { if (bytes === 2) raw.writeUInt16BE(labels[x], 2 * x); else raw[x] = labels[x]; }
  const line = Buffer.alloc(rowBytes + 1);
  // A row of background is stored plain: trying every filter on it finds nothing better, at some cost.
  if (labels.every((v) => v === 0)) line.fill(0); else filtered(raw, prev, line);
  if (!deflate.write(line)) await once(deflate, 'drain');
  [raw, prev] = [prev, raw];
}
deflate.end();
await once(deflate, 'end');
file.end(chunk('IEND', Buffer.alloc(0)));
await once(file, 'finish');
console.log(`${out}: ${width} × ${height} px, ${bits}-bit, ${across * down} cells`);
