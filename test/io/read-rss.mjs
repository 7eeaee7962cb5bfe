// Child process of read.test.ts: reads a generated single-line FeatureCollection of MB megabytes with the built
// reader and prints the feature count and how far the resident set grew, in bytes. With --hold it keeps every
// feature's bytes, as a reader that buffered the whole input would: the control that shows the limit can be broken.
import { readDocuments } from '../../dist/io/read.js';

const mb = Number(process.argv[2]);
const hold = process.argv.includes('--hold');
const feature = new TextEncoder().encode(`${JSON.stringify({ type: 'Feature', id: 1, geometry: { type: 'Point', coordinates: [1.5, 2] }, properties: { s: 'a]}"\\[{' } })},`);
const perBlock = 1000;
const block = new Uint8Array(feature.length * perBlock);
for (let k = 0; k < perBlock; k++) block.set(feature, k * feature.length);
const blocks = Math.ceil((mb * 2 ** 20) / block.length);
const source = {
  name: 'generated',
  open: () => (async function* () {
    yield new TextEncoder().encode('{"type":"FeatureCollection","features":[');
    // A fresh buffer per chunk, as a file stream gives: the reader may keep views into a chunk only while it needs them.
    for (let k = 0; k < blocks - 1; k++) yield block.slice();
    yield block.slice(0, block.length - 1);
    yield new TextEncoder().encode('],"id":"z"}');
  })(),
};

const held = [];
const before = process.memoryUsage().rss;
let features = 0;
let members = null;
for await (const ev of readDocuments(source)) {
  if (ev.kind === 'feature') {
    features++;
    if (hold) held.push(ev.bytes);
  } else members = ev.members;
}
const grown = process.resourceUsage().maxRSS * 1024 - before;
process.stdout.write(`${JSON.stringify({ features, expected: blocks * perBlock, members, grown, held: held.length })}\n`);
