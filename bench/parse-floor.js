// The parse floor of an input: single-core CPU time of JSON.parse over all of its text, the least any JSON builder pays.
//
// Usage: node bench/parse-floor.js FILE [--piece-mb 64]
// A file over V8's string limit (512 Mi characters) cannot be one JSON.parse: it is cut into pieces of about
// --piece-mb at feature boundaries of a pretty-printed FeatureCollection (bench/generate.js --format fc-pretty: each
// feature opens with a line holding four spaces and '{'), each piece parsed as an array. Only the time inside
// JSON.parse counts (reading and cutting do not). Prints one line of JSON: {bytes, pieces, parseSeconds, features}.
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { 'piece-mb': { type: 'string', default: '64' } } });
if (positionals.length !== 1) {
  process.stderr.write('usage: node bench/parse-floor.js FILE [--piece-mb N]\n');
  process.exit(2);
}
const file = positionals[0];
const size = statSync(file).size;
const piece = Number(values['piece-mb']) * 2 ** 20;

/** CPU seconds (user + system) spent in fn. */
function cpu(fn) {
  const c0 = process.cpuUsage();
  const value = fn();
  const c = process.cpuUsage(c0);
  return { value, seconds: (c.user + c.system) / 1e6 };
}

let parseSeconds = 0;
let features = 0;
let pieces = 0;
// A file V8 can hold as one string (under 512 Mi characters; every minified input here) is parsed whole.
if (size < piece || size < 400 * 2 ** 20) {
  const text = Buffer.alloc(size);
  const fd = openSync(file, 'r');
  readSync(fd, text, 0, size, 0);
  closeSync(fd);
  const s = text.toString('utf8');
  const r = cpu(() => JSON.parse(s));
  parseSeconds = r.seconds;
  features = r.value.features?.length ?? 0;
  pieces = 1;
} else {
  // Features of the collection as text: from the first '[' after "features", cut where a line starts a new feature.
  const fd = openSync(file, 'r');
  let carry = '';
  let at = 0;
  let started = false;
  const buf = Buffer.alloc(piece);
  for (;;) {
    const n = readSync(fd, buf, 0, piece, at);
    at += n;
    let text = carry + buf.toString('utf8', 0, n);
    if (!started) {
      const open = text.indexOf('[', text.indexOf('"features"'));
      text = text.slice(open + 1);
      started = true;
    }
    // Everything before the last feature start is whole features (and separating commas); at the end, the array's close.
    const cut = n === 0 ? text.lastIndexOf(']') : text.lastIndexOf('\n    {');
    const whole = text.slice(0, cut).trim().replace(/,$/, '');
    carry = text.slice(cut);
    if (whole.length > 0) {
      const r = cpu(() => JSON.parse(`[${whole}]`));
      parseSeconds += r.seconds;
      features += r.value.length;
      pieces++;
    }
    if (n === 0) break;
  }
  closeSync(fd);
}
process.stdout.write(`${JSON.stringify({ bytes: size, pieces, parseSeconds: Math.round(parseSeconds * 100) / 100, features })}\n`);
