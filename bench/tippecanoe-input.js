// Writes a bench slide as tippecanoe reads it fastest (one feature per line, for `-P`), its pixels mapped onto the
// Web Mercator square (`-s EPSG:3857`) so that tippecanoe's tile z/x/y covers the pixels of our tile z/x/y.
//
// Usage: node bench/tippecanoe-input.js SLIDE.json OUT.ndjson
// The world is the build's: the smallest power of two holding the image (the slide's width and height properties).
import { readFileSync, writeFileSync, renameSync } from 'node:fs';

const [input, output] = process.argv.slice(2);
if (!input || !output) {
  process.stderr.write('usage: node bench/tippecanoe-input.js SLIDE.json OUT.ndjson\n');
  process.exit(2);
}
const doc = JSON.parse(readFileSync(input, 'utf8'));
const { width, height } = doc.properties;
const side = 2 ** Math.ceil(Math.log2(Math.max(width, height)));
/** Half the side of the Web Mercator square, in metres. */
const E = 20037508.342789244;
const at = ([x, y]) => [(x / side) * 2 * E - E, E - (y / side) * 2 * E];
const map = (c) => (typeof c[0] === 'number' ? at(c) : c.map(map));
const lines = [];
for (const f of doc.features) lines.push(JSON.stringify({ ...f, geometry: { type: f.geometry.type, coordinates: map(f.geometry.coordinates) } }));
const tmp = `${output}.partial`;
writeFileSync(tmp, lines.join('\n') + '\n');
renameSync(tmp, output);
process.stderr.write(JSON.stringify({ features: lines.length, side }) + '\n');
