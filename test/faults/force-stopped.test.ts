// A --force build stopped part-way through its removal of what an earlier build wrote, killed (strace) or at a file it
// cannot remove (chattr): it keeps its work state, a plain build says what happened, and --resume or --force goes on.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { expectOk, expectSamePyramid, listFiles, removeTemps, runCli, tempDir } from '../e2e/helpers.js';
import { chattr, expectUserFiles, forceInputs, hasChattr, hasStrace, killedAtUnlink, plantUserFiles, pyramidFiles, snapshot } from './force-fixture.js';

afterAll(removeTemps);

const { big, small, cleanSmall } = forceInputs();

/** What a build --force stopped in its removal leaves in its work directory: its process's record, its plan, the mark. */
const WORK_STATE = ['owner.json', 'plan.json', 'removing.json'];

describe.skipIf(!hasStrace)('a --force removal killed part-way (strace kills at the 12th unlink)', () => {
  /** OUT holding a pyramid of big.json with more zooms than small.json's build makes: its finest tiles are the old build's alone. */
  async function oldPyramid(tag: string): Promise<string> {
    const out = path.join(tempDir(tag), 'out');
    expectOk(await runCli(['build', big, '-o', out, '-q', '--max-zoom', '6']), 'the earlier build');
    expect(listFiles(out).length).toBeGreaterThan(40);
    return out;
  }

  it('a plain build says so (exit 4); build --resume removes the rest of the earlier pyramid before it writes, and --force again starts over: the same pyramid as a clean build', async () => {
    const out = await oldPyramid('force-killed');
    const killed = await killedAtUnlink(['build', small, '-o', out, '-q', '--force'], 12);
    expect(killed.signal ?? killed.code, killed.stderr).not.toBe(0);
    expect(fs.existsSync(path.join(out, 'tileset.json'))).toBe(false);
    expect(fs.existsSync(path.join(out, '6'))).toBe(true);
    // A plain build says what was stopped, and both ways on, touching nothing; each of them gives the clean pyramid.
    const before = snapshot(out);
    const plain = await runCli(['build', small, '-o', out, '-q']);
    expect([plain.code, plain.stderr]).toEqual([4, `error: ${path.join(out, '.mudm-work')} holds the state of a build --force of this output that stopped before it had removed all that an earlier build wrote in ${out} (it was killed, or could not remove a file), and wrote none of its own tiles: `
      + `mudm-tiles build INPUT... -o ${out} --resume continues it, with the inputs and options it was given, removing the rest first; mudm-tiles build INPUT... -o ${out} --force starts over\n`]);
    expect(snapshot(out)).toEqual(before);
    const again = path.join(path.dirname(out), 'again');
    fs.cpSync(out, again, { recursive: true });
    expectOk(await runCli(['build', small, '-o', again, '-q', '--force']), 'build --force again');
    expectSamePyramid(again, cleanSmall, ['run'], true);
    // The steps of a sharded build say whose work directory it is, the command that was stopped, and what goes on with it.
    for (const [args, nothing] of [[['build-shard', out, '--shard', '0'], 'build-shard: no shard 0 to tile'], [['finalize', out], 'finalize: nothing to finalize']] as const) {
      const refused = await runCli(args);
      expect([refused.code, refused.stderr]).toEqual([2, `error: ${nothing}: ${out} holds no plan for shards but the work directory of a plain build (${path.join(out, '.mudm-work')}, which build made, not plan), `
        + `interrupted by build --force before it had removed what an earlier build wrote in ${out} (some of it is left): mudm-tiles build INPUT... -o ${out} --resume continues it, with the inputs and options it was given, removing the rest first (build --force again starts over); `
        + `to build it in shards instead, run mudm-tiles plan INPUT... -o ${out} --shards N --force, then build-shard and finalize\n`]);
    }
    expect(snapshot(out)).toEqual(before);
    expectOk(await runCli(['build', small, '-o', out, '-q', '--resume']), 'build --resume');
    expectSamePyramid(out, cleanSmall, ['run'], true);
  });

  it('build-shard after plan --force killed so refuses, naming what to run; plan --force again then gives the clean pyramid', async () => {
    const out = await oldPyramid('plan-force-killed');
    const killed = await killedAtUnlink(['plan', small, '-o', out, '-q', '--force', '--shards', '2'], 12);
    expect(killed.signal ?? killed.code, killed.stderr).not.toBe(0);
    const refused = await runCli(['build-shard', out, '--shard', '0', '-q']);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toBe(`error: ${path.join(out, '.mudm-work')}: plan --force was stopped before it removed what an earlier build wrote in the output, and some of it is left: run plan --force again\n`);
    expectOk(await runCli(['plan', small, '-o', out, '-q', '--force', '--shards', '2']), 'plan --force');
    for (const shard of ['0', '1']) expectOk(await runCli(['build-shard', out, '--shard', shard, '-q']), `shard ${shard}`);
    expectOk(await runCli(['finalize', out, '-q']), 'finalize');
    expectSamePyramid(out, cleanSmall, ['run', 'timings', 'units'], true);
  });
});

describe('a --force removal that cannot remove what an earlier build wrote', () => {
  it('a folder where the build wrote a file: refused before anything goes (exit 4), naming it; moved away, --force goes on', async () => {
    const out = path.join(tempDir('force-folder'), 'out');
    expectOk(await runCli(['build', big, '-o', out, '-q', '--max-zoom', '4']), 'the earlier build');
    plantUserFiles(out);
    const report = path.join(out, 'build-report.json');
    fs.rmSync(report);
    fs.mkdirSync(report);
    fs.writeFileSync(path.join(report, 'mine.txt'), 'mine');
    const before = snapshot(out);
    const r = await runCli(['build', small, '-o', out, '-q', '--force']);
    expect([r.code, r.stderr]).toEqual([4, `error: ${report} is a folder where an earlier build wrote a file: no build made it, and --force removes only what builds wrote; move it away or choose another output (nothing was removed)\n`]);
    expect(snapshot(out)).toEqual(before);
    fs.renameSync(report, path.join(path.dirname(out), 'moved'));
    expectOk(await runCli(['build', small, '-o', out, '-q', '--force']), 'the message followed');
    expectUserFiles(out);
    expect(fs.readFileSync(path.join(path.dirname(out), 'moved', 'mine.txt'), 'utf8')).toBe('mine');
  });

  it.skipIf(!hasChattr)('an immutable file, or a folder in an append-only one: exit 4 naming it, what was removed and what to run; the user\'s files stay, its work state kept; and --force again, once it can go, gives the clean pyramid', async () => {
    for (const [rel, flag] of [['build-report.json', '+i'], ['4', '+a']] as const) {
      const out = path.join(tempDir('force-immutable'), 'out');
      expectOk(await runCli(['build', big, '-o', out, '-q', '--max-zoom', '4']), 'the earlier build');
      plantUserFiles(out);
      const held = path.join(out, rel);
      expect(chattr(flag, held)).toBe(true);
      let r;
      try {
        r = await runCli(['build', small, '-o', out, '-q', '--force']);
      } finally {
        chattr(flag.replace('+', '-'), held);
      }
      // The descriptor goes first, then the tiles, folders deepest first: an append-only zoom folder keeps its column folders.
      const [stuck, removed] = rel === '4' ? [path.join(out, '4', '0'), /removed \d+ file\(s\)/] : [held, /removed 1 file\(s\)/];
      expect(r.code, r.stderr).toBe(4);
      expect(r.stderr).toMatch(new RegExp(`^error: cannot remove ${stuck}, which an earlier build wrote: operation not permitted \\(it or its folder is immutable or append-only, as lsattr -d shows, or it may not be removed by this user\\)\\. `));
      expect(r.stderr).toMatch(removed);
      expect(r.stderr).toContain(`of what earlier builds wrote in ${out} before it (that pyramid is no longer whole), and touched nothing else; its state is kept in ${path.join(out, '.mudm-work')}: `
        + `once ${stuck} can be removed (or is moved away), run mudm-tiles build INPUT... -o ${out} --resume, with the same inputs and options, to continue it: it removes the rest of what earlier builds wrote, then builds (build --force again starts over)\n`);
      expect(fs.existsSync(path.join(out, 'tileset.json')), 'no descriptor over a half-removed pyramid').toBe(false);
      expect(fs.readdirSync(path.join(out, '.mudm-work')).sort(), 'the work state a kill there leaves').toEqual(WORK_STATE);
      expectUserFiles(out);
      expectOk(await runCli(['build', small, '-o', out, '-q', '--force']), '--force again');
      expectUserFiles(out);
      expect(pyramidFiles(out)).toEqual(pyramidFiles(cleanSmall));
    }
  });

  it.skipIf(!hasChattr)('build --force so stopped: a plain build says what happened (exit 4, nothing touched), --resume while the file is held says to run it again, and once it can go gives the clean pyramid', async () => {
    const out = path.join(tempDir('force-immutable-resume'), 'out');
    const work = path.join(out, '.mudm-work');
    expectOk(await runCli(['build', big, '-o', out, '-q', '--max-zoom', '4']), 'the earlier build');
    plantUserFiles(out);
    const held = path.join(out, listFiles(out).find((f) => f.startsWith('4/') && f.endsWith('.pbf')) as string);
    expect(chattr('+i', held)).toBe(true);
    try {
      const r = await runCli(['build', small, '-o', out, '-q', '--force']);
      expect([r.code, r.stderr]).toEqual([4, expect.stringMatching(new RegExp(`^error: cannot remove ${held}, which an earlier build wrote: .* build --force removed \\d+ file\\(s\\) .* its state is kept in ${work}: .* --resume, with the same inputs and options, to continue it`))]);
      // Its plan and the mark of its removal, under way; its process recorded as ended; no descriptor.
      expect(fs.readdirSync(work).sort()).toEqual(WORK_STATE);
      expect(JSON.parse(fs.readFileSync(path.join(work, 'owner.json'), 'utf8'))).toMatchObject({ command: 'build', ended: true });
      expect(JSON.parse(fs.readFileSync(path.join(work, 'removing.json'), 'utf8'))).toEqual({ by: 'force', command: 'build' });
      expect(fs.existsSync(path.join(out, 'tileset.json'))).toBe(false);
      expect(fs.existsSync(held)).toBe(true);
      const before = snapshot(out);
      const plain = await runCli(['build', small, '-o', out, '-q']);
      expect([plain.code, plain.stderr]).toEqual([4, `error: ${work} holds the state of a build --force of this output that stopped before it had removed all that an earlier build wrote in ${out} (it was killed, or could not remove a file), and wrote none of its own tiles: `
        + `mudm-tiles build INPUT... -o ${out} --resume continues it, with the inputs and options it was given, removing the rest first; mudm-tiles build INPUT... -o ${out} --force starts over\n`]);
      expect(snapshot(out)).toEqual(before);
      const blocked = await runCli(['build', small, '-o', out, '-q', '--resume']);
      expect([blocked.code, blocked.stderr]).toEqual([4, `error: cannot remove ${held}, which an earlier build wrote: operation not permitted (it or its folder is immutable or append-only, as lsattr -d shows, or it may not be removed by this user). `
        + `build --resume removed nothing in ${out}; its state is kept in ${work}: once ${held} can be removed (or is moved away), run mudm-tiles build INPUT... -o ${out} --resume again to continue it: it removes the rest of what earlier builds wrote, then builds (build --force again starts over)\n`]);
      expect(fs.readdirSync(work).sort()).toEqual(WORK_STATE);
      expect(fs.existsSync(path.join(out, 'tileset.json'))).toBe(false);
    } finally {
      chattr('-i', held);
    }
    expectOk(await runCli(['build', small, '-o', out, '-q', '--resume']), '--resume once it can go');
    expectUserFiles(out);
    expect(pyramidFiles(out)).toEqual(pyramidFiles(cleanSmall));
    expect(fs.existsSync(work)).toBe(false);
  });

  it.skipIf(!hasChattr)('plan --force stopped the same way says to plan again in shards (--shards N), not in one', async () => {
    const out = path.join(tempDir('force-immutable-plan'), 'out');
    expectOk(await runCli(['build', big, '-o', out, '-q', '--max-zoom', '4']), 'the earlier build');
    const held = path.join(out, 'build-report.json');
    expect(chattr('+i', held)).toBe(true);
    let r;
    try {
      r = await runCli(['plan', small, '-o', out, '--shards', '2', '--force']);
    } finally {
      chattr('-i', held);
    }
    expect(r.code, r.stderr).toBe(4);
    expect(r.stderr).toContain(`plan --force removed 1 file(s) of what earlier builds wrote in ${out} before it (that pyramid is no longer whole), and touched nothing else; once ${held} can be removed (or is moved away), run mudm-tiles plan INPUT... -o ${out} --shards N --force again: it removes the rest of what earlier builds wrote, then plans\n`);
    // A plan has no --resume: its work directory goes, and plan --force reads its records anew.
    expect(fs.existsSync(path.join(out, '.mudm-work'))).toBe(false);
  });

  it.skipIf(!hasChattr)('an archive into an append-only folder: exit 4 naming the attribute and the folder it could not remove, not an internal error', async () => {
    const dir = path.join(tempDir('append-only-archive'), 'a');
    fs.mkdirSync(dir);
    expect(chattr('+a', dir)).toBe(true);
    let r, names;
    try {
      r = await runCli(['build', small, '-o', path.join(dir, 'x.pmtiles'), '-q']);
      names = fs.readdirSync(dir);
    } finally {
      chattr('-a', dir);
    }
    expect(names).toEqual([expect.stringMatching(/^\.x\.pmtiles\.mudm-work\.claiming-[0-9a-f]+$/)]);
    expect([r.code, r.stderr]).toEqual([4, `error: cannot write ${path.join(dir, '.x.pmtiles.mudm-work')}: permission denied (its folder may be append-only or immutable, as lsattr -d shows); `
      + `${path.join(dir, names[0])}, made on the way, could not be removed either: remove it once the folder allows\n`]);
  });
});
