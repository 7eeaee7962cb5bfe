// Writes a bench slide as tippecanoe reads it fastest (one feature per line, for `-P`), its pixels mapped onto the
// Web Mercator square (`-s EPSG:3857`) so that tippecanoe's tile z/x/y covers the pixels of our tile z/x/y.
//
// Usage: node bench/tippecanoe-input.js SLIDE.json OUT.ndjson WIDTH HEIGHT
// The world is the build's: the smallest power of two holding the image. The slide is streamed feature by feature
// through mudm-tiles' own reader (dist/, `npm run build` first), so a multi-GB slide never has to be one string.
import { openSync, writeSync, closeSync, renameSync } from 'node:fs';
import { fileSource, readDocuments } from '../dist/index.js';

const [input, output, width, height] = process.argv.slice(2);
if (!input || !output || !(Number(width) > 0) || !(Number(height) > 0)) {
  process.stderr.write('usage: node bench/tippecanoe-input.js SLIDE.json OUT.ndjson WIDTH HEIGHT\n');
  process.exit(2);
}
const side = 2 ** Math.ceil(Math.log2(Math.max(Number(width), Number(height))));
/** Half the side of the Web Mercator square, in metres. */
const E = 20037508.342789244;
const at = ([x, y]) => [(x / side) * 2 * E - E, E - (y / side) * 2 * E];
const map = (c) => (typeof c[0] === 'number' ? at(c) : c.map(map));

const tmp = `${output}.partial`;
const fd = openSync(tmp, 'w');
let features = 0;
// Lines go out a few MB at a time: one write per feature would cost more than the conversion.
let pending = [];
let pendingChars = 0;
const flush = () => {
  if (pending.length > 0) writeSync(fd, pending.join(''));
  pending = [];
  pendingChars = 0;
};
for await (const ev of readDocuments(fileSource(input))) {
  if (ev.kind !== 'feature') continue;
  const f = JSON.parse(ev.text);
  const line = JSON.stringify({ ...f, geometry: { type: f.geometry.type, coordinates: map(f.geometry.coordinates) } }) + '\n';
  pending.push(line);
  pendingChars += line.length;
  features++;
  if (pendingChars > 1 << 22) flush();
}
flush();
closeSync(fd);
renameSync(tmp, output);
process.stderr.write(JSON.stringify({ features, side }) + '\n');
