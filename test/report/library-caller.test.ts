// The library as a caller sees it: error classes named in logs, a read error with its place, exit codes; no folder left behind.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUILD_OPTIONS, collection } from '../inspect/fixture.js';
import { describeError } from '../../src/cli/exit.js';
import { buildPyramid, memorySource, validateSource, DataError, ImageError, InputError, InterruptedError, MemorySink, OutputError, ReadError, StateUsageError, UsageError, ValueTooLargeError, WorkStateError } from '../../src/index.js';

describe('error classes', () => {
  it('are named as their class (String(e), stacks), with their exit codes', () => {
    const cases: [Error & { exitCode: number }, string, number][] = [
      [new DataError('d'), 'DataError', 1],
      [new ValueTooLargeError('f.json', 2, 3, 'feature 1', 10, 'why'), 'ValueTooLargeError', 1],
      [new UsageError('u'), 'UsageError', 2],
      [new StateUsageError('s'), 'StateUsageError', 2],
      [new InputError('i'), 'InputError', 3],
      [new ImageError('a.tif', 'unreadable'), 'ImageError', 3],
      [new OutputError('o'), 'OutputError', 4],
      [new WorkStateError('w'), 'WorkStateError', 4],
      [new InterruptedError('s'), 'InterruptedError', 130],
    ];
    for (const [e, name, code] of cases) {
      expect(e.name).toBe(name);
      expect(String(e).startsWith(`${name}: `), String(e)).toBe(true);
      expect(e.exitCode).toBe(code);
    }
  });

  it('a read error says where, as the CLI does', () => {
    expect(String(new ReadError('cells.json', 3, 5, 'unexpected token'))).toBe('ReadError: cells.json:3:5: unexpected token');
    expect(String(new ReadError('gone.json', 0, 0, 'no such file'))).toBe('ReadError: gone.json: no such file');
  });

  it('a read error\'s message names the file, line and column, for a caller who prints only it (the CLI prints it once)', async () => {
    const text = '{"type":"FeatureCollection","features":[\n{"type":"Feature","geometry":null,"properties":{}},\n{"type":"Feature" "geometry":null}\n]}';
    const built = await buildPyramid([{ source: memorySource('cells.json', text) }], BUILD_OPTIONS, { sink: new MemorySink() }).catch((e: unknown) => e);
    const checked = (await validateSource(memorySource('cells.json', text))).unreadable;
    expect(built).toBeInstanceOf(ReadError);
    const e = built as ReadError;
    const why = 'feature 1: Expected \',\' or \'}\' after property value, found \'"\' (JSON path /type)';
    expect([e.message, e.reason, e.where, e.exitCode]).toEqual([`cells.json:3:19: ${why}`, why, 'cells.json:3:19', 3]);
    expect(describeError(e)).toBe(e.message);
    // validate's report gives the place in fields of its own.
    expect(checked).toEqual({ message: why, line: 3, column: 19 });
  });

  it('a build of no input says so', async () => {
    await expect(buildPyramid([], {}, { sink: new MemorySink() })).rejects.toThrow(/^no input given: no valid feature \(0 read\)/);
  });
});

describe('a build into a caller\'s sink with an output folder named', () => {
  it('leaves no empty folder it made for its work directory', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mudm-sink-out-'));
    try {
      const out = path.join(dir, 'out');
      const sink = new MemorySink();
      await buildPyramid([{ source: memorySource('cells.json', collection()) }], { ...BUILD_OPTIONS, out }, { sink });
      expect(sink.files.has('tileset.json')).toBe(true);
      expect(fs.readdirSync(dir)).toEqual([]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
