// Output problems end with exit 4 and a message naming the path: a file in the way, not empty, permission, disk full.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, SAMPLE, expectOk, expectSamePyramid, removeTemps, runCli, runProcess, tempDir, tmpLeftovers, waitFor, type RunResult } from './helpers.js';

afterAll(removeTemps);

const isRoot = process.getuid?.() === 0;
/** As root, chmod does not stop writes: the CLI then runs as `nobody` through setpriv, when there is one. */
const setpriv = isRoot && spawnSync('setpriv', ['--version']).status === 0 ? 'setpriv' : undefined;

describe('two builds into one archive', () => {
  it('the second is refused (exit 4) while the first runs, and the first finishes whole', async () => {
    const dir = tempDir('two-builds');
    const file = path.join(dir, 'slide.pmtiles');
    const input = fs.readFileSync(path.join(SAMPLE, 'cells.json'));
    const args = ['build', '-', '-q', '--max-zoom', '1', '-o'];
    // The first reads standard input: it holds its output until the input is given.
    const first = spawn(process.execPath, [BIN, ...args, file], { stdio: ['pipe', 'ignore', 'pipe'] });
    let firstErr = '';
    first.stderr.setEncoding('utf8').on('data', (t: string) => { firstErr += t; });
    const firstExit = new Promise<number | null>((resolve) => first.on('close', resolve));
    expect(await waitFor(() => fs.existsSync(path.join(dir, '.slide.pmtiles.mudm-work')), 20_000)).toBe(true);
    const second = await runCli(['build', path.join(SAMPLE, 'cells.json'), '-q', '--max-zoom', '1', '-o', file]);
    expect(second.code, second.stderr).toBe(4);
    expect(second.stderr).toContain(`${path.join(dir, '.slide.pmtiles.mudm-work')} holds the state of another build of this output`);
    // Nor do --force (which would remove its state from under it) and --resume (which would take it over).
    for (const flag of ['--force', '--resume']) {
      const r = await runCli(['build', path.join(SAMPLE, 'cells.json'), '-q', '--max-zoom', '1', flag, '-o', file]);
      expect(r.code, r.stderr).toBe(4);
      expect(r.stderr).toContain(`${path.join(dir, '.slide.pmtiles.mudm-work')} belongs to a build that is still running (pid ${first.pid}): ${flag} does not stop it; wait for it to end or stop it first`);
    }
    first.stdin.end(input);
    expect(await firstExit, firstErr).toBe(0);
    // Whole: the bytes of the same build run alone.
    const alone = path.join(dir, 'alone.pmtiles');
    expect(spawnSync(process.execPath, [BIN, ...args, alone], { input }).status).toBe(0);
    expect(fs.readFileSync(file).equals(fs.readFileSync(alone))).toBe(true);
    expect(fs.readdirSync(dir).sort()).toEqual(['alone.build-report.json', 'alone.pmtiles', 'slide.build-report.json', 'slide.pmtiles']);
  });
});

describe('a work directory whose recorded process is gone', () => {
  it('is taken over when its pid now names another process (started later), and refused while the same one runs', async () => {
    const dir = tempDir('owner');
    const file = path.join(dir, 'slide.pmtiles');
    const work = path.join(dir, '.slide.pmtiles.mudm-work');
    const args = ['build', path.join(SAMPLE, 'cells.json'), '-q', '--max-zoom', '1', '-o', file];
    // A live process standing in for the build: its pid, once with its own start, once with another's.
    const other = spawn('sleep', ['30']);
    try {
      const stat = fs.readFileSync(`/proc/${other.pid}/stat`, 'utf8');
      const boot = fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
      const start = `${boot}:${stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]}`;
      fs.mkdirSync(work);
      fs.writeFileSync(path.join(work, 'owner.json'), JSON.stringify({ pid: other.pid, host: os.hostname(), start }));
      const refused = await runCli([...args, '--force']);
      expect(refused.code, refused.stderr).toBe(4);
      expect(refused.stderr).toContain(`belongs to a build that is still running (pid ${other.pid}): --force does not stop it; wait for it to end or stop it first (if no build runs there, remove ${path.join(work, 'owner.json')})`);
      fs.writeFileSync(path.join(work, 'owner.json'), JSON.stringify({ pid: other.pid, host: os.hostname(), start: `${boot}:1` }));
      const taken = await runCli([...args, '--force']);
      expect(taken.code, taken.stderr).toBe(0);
      expect(fs.readdirSync(dir).sort()).toEqual(['slide.build-report.json', 'slide.pmtiles']);
      // A shard running here, in a planned work directory: a shard records itself under owners/.
      const plan = await runCli(['plan', path.join(SAMPLE, 'cells.json'), '-q', '--max-zoom', '1', '--shards', '2', '-o', file, '--force']);
      expect(plan.code, plan.stderr).toBe(0);
      fs.mkdirSync(path.join(work, 'owners'));
      fs.writeFileSync(path.join(work, 'owners', 'shard-1.json'), JSON.stringify({ pid: other.pid, host: os.hostname(), start }));
      const shardRuns = await runCli([...args, '--force']);
      expect(shardRuns.code, shardRuns.stderr).toBe(4);
      expect(shardRuns.stderr).toContain(`belongs to a build that is still running (pid ${other.pid}): --force does not stop it; wait for it to end or stop it first (if no build runs there, remove ${path.join(work, 'owners', 'shard-1.json')})`);
      // Nor does a second run of that shard, which would write its parts at once.
      const twice = await runCli(['build-shard', file, '--shard', '1', '-q']);
      expect(twice.code, twice.stderr).toBe(4);
      expect(twice.stderr).toContain(`build-shard: shard 1 is running already (pid ${other.pid}): wait for it to end or stop it first (if it does not run, remove ${path.join(work, 'owners', 'shard-1.json')})`);
      // The shard that does run records itself beside it.
      const shard = await runCli(['build-shard', file, '--shard', '0', '-q']);
      expect(shard.code, shard.stderr).toBe(0);
      expect(fs.readdirSync(path.join(work, 'owners')).sort()).toEqual(['shard-0.json', 'shard-1.json']);
      // A finalize running here: a second one would append to its part at once (an archive of mixed bytes, exit 0).
      fs.rmSync(path.join(work, 'owners', 'shard-1.json'));
      expect((await runCli(['build-shard', file, '--shard', '1', '-q'])).code).toBe(0);
      fs.writeFileSync(path.join(work, 'owners', 'finalize.json'), JSON.stringify({ pid: other.pid, host: os.hostname(), start }));
      const second = await runCli(['finalize', file, '-q']);
      expect(second.code, second.stderr).toBe(4);
      expect(second.stderr).toContain(`finalize: ${file} is being finalized already (pid ${other.pid}): wait for it to end or stop it first (if it does not run, remove ${path.join(work, 'owners', 'finalize.json')})`);
      const forced = await runCli([...args, '--force']);
      expect(forced.code, forced.stderr).toBe(4);
      expect(fs.existsSync(file)).toBe(false);
      // Once it has ended, finalize goes on.
      fs.writeFileSync(path.join(work, 'owners', 'finalize.json'), JSON.stringify({ pid: other.pid, host: os.hostname(), start: `${boot}:1` }));
      const last = await runCli(['finalize', file, '-q']);
      expect(last.code, last.stderr).toBe(0);
      expect(fs.existsSync(file)).toBe(true);
    } finally {
      other.kill();
    }
  });
});

describe('exit 4 naming the path', () => {
  it.each(['build', 'plan'])('%s: the output path is a file', async (command) => {
    const file = path.join(tempDir('file'), 'pyramid');
    fs.writeFileSync(file, 'not a directory');
    const r = await runCli([command, SAMPLE, '-o', file, ...(command === 'plan' ? ['--shards', '2'] : [])]);
    expect(r.code, r.stderr).toBe(4);
    expect(r.stderr).toContain(file);
    expect(fs.readFileSync(file, 'utf8')).toBe('not a directory');
  });

  it('build: the output, or a folder above it, is a symbolic link to nowhere (named, with its target; kept)', async () => {
    const base = tempDir('dangling');
    const link = path.join(base, 'out');
    fs.symlinkSync(path.join(base, 'gone'), link);
    for (const out of [link, path.join(link, 'slide')]) {
      const r = await runCli(['build', SAMPLE, '-o', out, '--workers', '1']);
      expect(r.code, r.stderr).toBe(4);
      expect(r.stderr).toContain(`${link} is a symbolic link to ${path.join(base, 'gone')}, which does not exist`);
    }
    expect(fs.readlinkSync(link)).toBe(path.join(base, 'gone'));
    expect(fs.readdirSync(base)).toEqual(['out']);
  });

  it('build: the output is not empty and --force is not given', async () => {
    const out = tempDir('nonempty');
    fs.writeFileSync(path.join(out, 'notes.txt'), 'mine');
    const r = await runCli(['build', SAMPLE, '-o', out]);
    expect(r.code, r.stderr).toBe(4);
    expect(r.stderr).toContain(out);
    expect(fs.readdirSync(out)).toEqual(['notes.txt']);
  });

  it.skipIf(isRoot && !setpriv)(
    isRoot && !setpriv ? 'SKIPPED permission denied: running as root without setpriv, and chmod does not stop root' : 'build: permission denied (a read-only parent directory)',
    async () => {
      const base = tempDir('perm');
      // mkdtemp makes a 0700 directory, which `nobody` could not even enter.
      fs.chmodSync(base, 0o755);
      const parent = path.join(base, 'readonly');
      fs.mkdirSync(parent);
      fs.chmodSync(parent, 0o555);
      const out = path.join(parent, 'out');
      const args = [BIN, 'build', SAMPLE, '-o', out, '--workers', '1'];
      const r = setpriv
        ? await runProcess('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, ...args], { cwd: base, env: { ...process.env, HOME: base } })
        : await runProcess(process.execPath, args);
      expect(r.code, r.stderr).toBe(4);
      expect(r.stderr).toContain(out);
      expect(r.stderr).toMatch(/permission denied/i);
      fs.chmodSync(parent, 0o755);
    },
  );

  // A full disk needs a small file system: a tmpfs, which only root (CAP_SYS_ADMIN) may mount. Each test mounts its
  // own and unmounts it, so that a run filtered to other tests leaves no mount behind (a probe is undone at once).
  const mnt = path.join(os.tmpdir(), `mudm-enospc-${process.pid}`);
  const mounted = isRoot && os.platform() === 'linux' && (() => {
    fs.mkdirSync(mnt, { recursive: true });
    const ok = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', mnt]).status === 0;
    if (ok) spawnSync('umount', [mnt]);
    fs.rmSync(mnt, { recursive: true, force: true });
    return ok;
  })();
  /** Runs `use` on a fresh tmpfs of `size`, unmounted after. */
  const onSmallDisk = async (size: string, use: (dir: string) => Promise<void>) => {
    const dir = path.join(mnt, size);
    fs.mkdirSync(dir, { recursive: true });
    expect(spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]).status).toBe(0);
    try {
      await use(dir);
    } finally {
      spawnSync('umount', [dir]);
      fs.rmSync(mnt, { recursive: true, force: true });
    }
  };

  /** Gives the tmpfs at `dir` room: what a user does (frees space) before --resume. */
  const grow = (dir: string) => expect(spawnSync('mount', ['-o', 'remount,size=16m', dir]).status).toBe(0);
  /** A full disk's exit: 4, the file named, the disk said full, and how to go on. */
  const expectDiskFull = (r: RunResult, where: string) => {
    expect(r.code, r.stderr).toBe(4);
    expect(r.stderr).toContain(`cannot write ${where}`);
    expect(r.stderr).toMatch(/no space left on device\. The disk is full: what the build wrote is kept \(its tiles so far, and its state in \S+mudm-work\); free some space, then run the same build with --resume to continue it/);
  };

  it.skipIf(!mounted)(
    mounted ? 'build: disk full (ENOSPC on a 512 KiB tmpfs) keeps its tiles and state; given space, --resume ends it with the bytes of a build run through' : 'SKIPPED disk full: cannot mount a small tmpfs here (needs root with CAP_SYS_ADMIN)',
    () => onSmallDisk('512k', async (disk) => {
      const out = path.join(disk, 'out');
      const args = ['build', SAMPLE, '-o', out, '--workers', '1', '-q'];
      const r = await runCli(args);
      expectDiskFull(r, out);
      expect(fs.existsSync(path.join(out, 'tileset.json'))).toBe(false);
      expect(fs.existsSync(path.join(out, '.mudm-work', 'plan.json')), 'the plan --resume continues').toBe(true);
      expect(tmpLeftovers(out), 'temporary files left on the full disk').toEqual([]);
      grow(disk);
      expectOk(await runCli([...args, '--resume']), '--resume with space');
      const whole = path.join(tempDir('disk-full-whole'), 'out');
      expectOk(await runCli(['build', SAMPLE, '-o', whole, '--workers', '1', '-q']), 'the build run through');
      expectSamePyramid(out, whole, [], true);
    }),
  );

  let whole: Promise<string> | undefined;
  /** The sample's archive built through, once for both sizes. */
  const wholeArchive = () => (whole ??= (async () => {
    const file = path.join(tempDir('disk-full-whole'), 'slide.pmtiles');
    expectOk(await runCli(['build', SAMPLE, '-o', file, '--workers', '1', '-q']), 'the archive built through');
    return file;
  })());

  // The sample's archive is 1.3 MB: 512 KiB fill while its parts are written, 2 MiB while they are assembled.
  it.skipIf(!mounted).each(['512k', '2m'])(
    mounted ? 'build -o FILE.pmtiles: disk full (a tmpfs of %s) keeps the work directory alone, no archive nor report; given space, --resume writes the archive a build run through writes' : 'SKIPPED disk full %s',
    (size) => onSmallDisk(size, async (disk) => {
      const file = path.join(disk, 'slide.pmtiles');
      const args = ['build', SAMPLE, '-o', file, '--workers', '1', '-q'];
      const r = await runCli(args);
      expectDiskFull(r, disk);
      expect(fs.readdirSync(disk)).toEqual(['.slide.pmtiles.mudm-work']);
      grow(disk);
      expectOk(await runCli([...args, '--resume']), '--resume with space');
      expect(fs.readdirSync(disk).sort()).toEqual(['slide.build-report.json', 'slide.pmtiles']);
      expect(fs.readFileSync(file).equals(fs.readFileSync(await wholeArchive())), 'the same archive').toBe(true);
    }),
  );
});
