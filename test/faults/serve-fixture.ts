// A pyramid folder laid out as a hostile or careless user leaves it for `serve`: secrets beside it, symlinks out, a work state.
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { tmpDir } from '../helpers/pyramid.js';

export interface ServeFixture {
  /** The temporary folder holding everything; remove it when done. */
  dir: string;
  /** The pyramid folder given to `serve`. */
  out: string;
  /** A folder beside OUT holding `secret.txt`. */
  secretDir: string;
  /** Unique text found only in files that must never be served (outside OUT, the work state, temporary files). */
  markers: string[];
}

/** Text that begins /etc/passwd on every Unix: a response holding it read a file outside OUT. */
export const PASSWD_MARK = 'root:x:0:0';

export function makeServeFixture(): ServeFixture {
  const dir = tmpDir('mudm-serve-faults');
  const out = path.join(dir, 'out');
  const secretDir = path.join(dir, 'secret');
  const secret = `SECRET-${randomBytes(8).toString('hex')}`;
  const work = `WORKSTATE-${randomBytes(8).toString('hex')}`;
  const partial = `PARTIAL-${randomBytes(8).toString('hex')}`;
  fs.mkdirSync(path.join(out, '0/0'), { recursive: true });
  fs.mkdirSync(path.join(out, '1/0'), { recursive: true });
  fs.mkdirSync(path.join(out, '.mudm-work/spill'), { recursive: true });
  fs.mkdirSync(secretDir);
  fs.writeFileSync(path.join(secretDir, 'secret.txt'), secret);
  fs.writeFileSync(path.join(dir, 'secret.txt'), secret);
  fs.writeFileSync(path.join(out, 'tileset.json'), '{"tilejson":"3.0.0","tiles":["{z}/{x}/{y}.pbf"]}');
  fs.writeFileSync(path.join(out, '0/0/0.pbf'), Buffer.from([0x1a, 0x00]));
  fs.writeFileSync(path.join(out, '.mudm-work/state.json'), `{"note":"${work}"}`);
  fs.writeFileSync(path.join(out, '.mudm-work/spill/unit-0'), work);
  // A tile being written by a build in progress, under the sink's temporary name.
  fs.writeFileSync(path.join(out, '1/0/0.pbf.tmp-0badc0de-3'), partial);
  // Files a user may keep beside the pyramid, named like Object.prototype members.
  fs.writeFileSync(path.join(out, 'notes.constructor'), 'a user file');
  fs.writeFileSync(path.join(out, 'notes.__proto__'), 'a user file');
  // Symlinks out of OUT: to a system file, to the root, to a folder, one shaped like a tile, one to the work state.
  fs.symlinkSync('/etc/passwd', path.join(out, 'passwd'));
  fs.symlinkSync('/', path.join(out, 'rootlink'));
  fs.symlinkSync(secretDir, path.join(out, 'outdir'));
  fs.symlinkSync(path.join(dir, 'secret.txt'), path.join(out, '0/0/1.pbf'));
  fs.symlinkSync('..', path.join(out, 'up'));
  fs.symlinkSync('.mudm-work', path.join(out, 'work'));
  // A symlink that stays inside OUT is as good as the file it names.
  fs.symlinkSync('tileset.json', path.join(out, 'alias.json'));
  return { dir, out, secretDir, markers: [secret, work, partial, PASSWD_MARK] };
}

/** The markers a response body holds (none, for a server that keeps to OUT). */
export function leaked(body: Buffer, fx: ServeFixture): string[] {
  const text = body.toString('latin1');
  return fx.markers.filter((m) => text.includes(m));
}
