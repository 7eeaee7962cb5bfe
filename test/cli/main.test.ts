// main() in process with in-memory io: command dispatch, help, version, usage errors, validate on stdin.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { memoryIO } from '../../src/cli/io.js';
import { loadCommand } from '../../src/cli/commands/index.js';
import { tmpDir } from '../helpers/pyramid.js';

describe('main', () => {
  it('no arguments: help on stderr, exit 2; --help: stdout, exit 0', async () => {
    const io = memoryIO();
    expect(await main([], io)).toBe(2);
    expect(io.err()).toMatch(/^Usage: mudm-tiles <command>/);
    const io2 = memoryIO();
    expect(await main(['--help'], io2)).toBe(0);
    expect(io2.out()).toMatch(/Commands:\n {2}validate/);
  });

  it('--version and help <command>', async () => {
    const io = memoryIO();
    expect(await main(['--version'], io)).toBe(0);
    expect(io.out()).toMatch(/^mudm-tiles \d+\.\d+\.\d+\n$/);
    const io2 = memoryIO();
    expect(await main(['help', 'validate'], io2)).toBe(0);
    expect(io2.out()).toMatch(/^Usage: mudm-tiles validate \[options\] FILE\|DIR\.\.\./);
  });

  it('each command\'s help says what an option means to it (extract writes a directory; inspect reads a format)', async () => {
    const help = async (command: string) => {
      const io = memoryIO();
      expect(await main([command, '--help'], io)).toBe(0);
      return io.out().replace(/\s+/g, ' ');
    };
    const extract = await help('extract');
    expect(extract).toContain('-o, --out DIR the directory to write the pyramid into');
    expect(extract).not.toContain('FILE.pmtiles: one PMTiles archive');
    expect(await help('inspect')).toContain('--format LIST the file a tile is decoded from, json or pbf');
    expect(await help('build')).toContain('--format LIST tile formats to write: json, pbf or json,pbf (default: json,pbf; pbf for -o FILE.pmtiles)');
    expect(await help('verify')).toContain('--tile-budget BYTES the largest PBF tile (JSON without PBF) below the finest zoom that passes (default: the budget the build held, from its report)');
    // build-shard has no --tmp-dir, and spills nothing: its records are the plan's.
    const shard = await help('build-shard');
    expect(shard).toContain("--memory-budget BYTES peak memory to stay under: the work units handed to workers hold at most a tenth of it in records at once (a heavier unit goes alone); the records are the plan's, on disk (e.g. 1G, 512M) (default: 1G)");
    expect(shard).not.toContain('--tmp-dir');
    expect(shard).toContain('--workers N worker threads for tiling (default: the cores, but no more than --memory-budget carries: about 160 MiB of it per worker, beyond 235 MiB for the process)');
    expect(await help('build')).toContain('none and gzip are refused for a directory of tile files (-o DIR without --archive), whose files a web server compresses (default: auto)');
    // Where an archive build spills, and the one line -q still prints: the README's Options table says both.
    expect(await help('build')).toContain('--tmp-dir DIR where spilled work units go (default: OUT/.mudm-work; .NAME.pmtiles.mudm-work beside -o NAME.pmtiles)');
    expect(await help('build')).toContain('-q, --quiet print nothing but errors, and how many features the pyramid lost (invalid, not placed)');
    expect(await help('finalize')).toContain('-q, --quiet print nothing but errors, and how many features the pyramid lost (invalid, not placed), as build -q');
    expect(await help('plan')).toContain('-q, --quiet print nothing but errors --log');
    // Every option a command's help of its options names is one that command takes.
    for (const command of ['validate', 'build', 'plan', 'build-shard', 'finalize', 'inspect', 'verify', 'serve', 'extract']) {
      const io = memoryIO();
      await main([command, '--help'], io);
      // The options' texts; the details may speak of another command's (inspect: archives built with --archive).
      const text = io.out().slice(io.out().indexOf('\nOptions:'));
      const takes = new Set([...text.matchAll(/^ {2}(?:-\w, )? *(--[a-z-]+)/gm)].map((m) => m[1]));
      const named = new Set([...text.matchAll(/(?<![\w-])--[a-z][a-z-]*[a-z]/g)].map((m) => m[0]));
      expect([...named].filter((f) => !takes.has(f)), command).toEqual([]);
    }
  });

  it('unknown command with a suggestion, exit 2', async () => {
    const io = memoryIO();
    expect(await main(['valdiate', 'x.json'], io)).toBe(2);
    expect(io.err()).toMatch(/unknown command 'valdiate'; did you mean 'validate'\?/);
    const io2 = memoryIO();
    expect(await main(['hlep'], io2)).toBe(2);
    expect(io2.err()).toMatch(/unknown command 'hlep'; did you mean 'help'\?/);
  });

  it('usage errors say how to get help; --log json gives JSON lines', async () => {
    const io = memoryIO();
    expect(await main(['validate', '--bogus'], io)).toBe(2);
    expect(io.err()).toBe("error: unknown option --bogus for validate\nRun 'mudm-tiles validate --help' for usage.\n");
    const io2 = memoryIO();
    expect(await main(['validate', '--log', 'json'], io2)).toBe(2);
    expect(JSON.parse(io2.err())).toEqual({ level: 'error', message: 'validate needs at least one FILE or DIR (or - for standard input)', exitCode: 2 });
  });

  it('a step refused by what its output holds (exit 2) says what to run, without the pointer to --help, which is for the command line', async () => {
    const dir = tmpDir('main-state');
    const input = path.join(dir, 'cells.json');
    fs.writeFileSync(input, JSON.stringify({ type: 'FeatureCollection', features: [{ type: 'Feature', geometry: { type: 'Point', coordinates: [5, 5] }, properties: {} }] }));
    const out = path.join(dir, 'out');
    const io = memoryIO();
    expect(await main(['build', input, '-o', out, '--resume'], io)).toBe(2);
    expect(io.err()).toBe(`error: --resume: there is no interrupted build in ${path.join(out, '.mudm-work')} (no plan.json): nothing to continue; build without --resume (--force replaces what an earlier build wrote)\n`);
    // The same command with a mistake in its line still points there.
    const io2 = memoryIO();
    expect(await main(['build', input, '-o', out, '--resume', '--force'], io2)).toBe(2);
    expect(io2.err()).toMatch(/\nRun 'mudm-tiles build --help' for usage\.\n$/);
  });

  it('commands load lazily; the validate module is found from the sources too', async () => {
    expect(typeof (await loadCommand('validate'))?.run).toBe('function');
  });

  it('validate reads stdin', async () => {
    const io = memoryIO({ stdin: '{"type":"Feature","geometry":null,"properties":{}}\n{"type":"Feature"}\n' });
    expect(await main(['validate', '-'], io)).toBe(1);
    expect(io.out()).toMatch(/^stdin:2:1: feature 1: \(top level\): .*\[feature-geometry-missing\]$/m);
    expect(io.out()).toMatch(/^stdin: invalid, 2 features \(1 invalid\), 1 error, 0 warnings$/m);
  });

  it('validate and build name standard input alike, stdin, in messages and --log json events (exit 3, unreadable)', async () => {
    const bad = '{"type":"Feature","geometry":null,"properties":{"a":1 2}}\n';
    const said = "stdin:1:55: Expected ',' or '}' after property value, found '2' (JSON path /properties/a)";
    const out = path.join(tmpDir('mudm-stdin-name'), 'out');
    for (const args of [['validate', '-'], ['build', '-', '-o', out, '--workers', '1']]) {
      const io = memoryIO({ stdin: bad });
      expect(await main([...args, '-q'], io), args[0]).toBe(3);
      expect(io.err(), args[0]).toContain(`error: ${said}\n`);
      const json = memoryIO({ stdin: bad });
      expect(await main([...args, '-q', '--log', 'json'], json), args[0]).toBe(3);
      const events = json.err().trim().split('\n').map((l) => JSON.parse(l) as { level: string; file?: string });
      expect(events.filter((e) => e.level === 'error'), args[0]).toEqual([expect.objectContaining({ file: 'stdin', line: 1, column: 55 })]);
    }
  });
});
