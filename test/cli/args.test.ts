// Argument parsing against the option registry, help generated from it, and error → exit-code mapping.
import { describe, expect, it } from 'vitest';
import { OPTIONS, flagName, type OptionSpec } from '../../src/options.js';
import { parseArgs, optionsOf } from '../../src/cli/args.js';
import { commandHelp, generalHelp } from '../../src/cli/help.js';
import { COMMANDS, commandInfo } from '../../src/cli/commands/index.js';
import {
  EXIT_INTERNAL,
  EXIT_INVALID,
  EXIT_OK,
  EXIT_OUTPUT,
  EXIT_UNREADABLE,
  EXIT_USAGE,
  describeError,
  exitCodeFor,
} from '../../src/cli/exit.js';
import { DataError, ImageError, InputError, OutputError, ReadError, UsageError, WorkStateError } from '../../src/report/errors.js';

function usageMessage(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(UsageError);
    return (e as Error).message;
  }
  throw new Error('expected a UsageError');
}

describe('parseArgs', () => {
  it('long flags with = or a separate value, short flags, booleans, positionals', () => {
    expect(parseArgs('build', ['a.json', '--out=dir', '--max-zoom', '7', '-q', '--force', 'b.json', '-'])).toEqual({
      options: { out: 'dir', maxZoom: 7, quiet: true, force: true },
      positionals: ['a.json', 'b.json', '-'],
    });
    expect(parseArgs('build', ['-odir']).options).toEqual({ out: 'dir' });
    expect(parseArgs('build', ['-o', 'dir']).options).toEqual({ out: 'dir' });
    expect(parseArgs('build', ['-o=dir']).options).toEqual({ out: 'dir' });
    expect(parseArgs('validate', ['-qh']).options).toEqual({ quiet: true, help: true });
  });

  it('an option of one value given twice takes the last (a step appending a user\'s options to its defaults); --input adds each', () => {
    expect(parseArgs('build', ['--max-zoom', '8', 'a.json', '--max-zoom=10', '-o', 'x', '--out', 'y', '--no-force', '--force']).options)
      .toEqual({ maxZoom: 10, out: 'y', force: true });
    expect(parseArgs('build', ['--input', 'c=0:a.json', '--input=c=1:b.json']).options).toEqual({ input: ['c=0:a.json', 'c=1:b.json'] });
  });

  it('--no-flag and --flag=false for switches', () => {
    expect(parseArgs('build', ['--no-force', '--preview=false', '--resume=yes']).options).toEqual({ force: false, preview: false, resume: true });
    expect(usageMessage(() => parseArgs('build', ['--force=maybe']))).toMatch(/--force is a switch/);
  });

  it('integers, byte sizes, lists, choices', () => {
    expect(parseArgs('build', ['--memory-budget', '512M', '--tile-budget=1.5K', '--input', 't=0:a.json', '--input=t=1:b.json', '--lod', 'none']).options).toEqual({
      memoryBudget: 512 * 2 ** 20,
      tileBudget: 1536,
      input: ['t=0:a.json', 't=1:b.json'],
      lod: 'none',
    });
    expect(usageMessage(() => parseArgs('build', ['--max-zoom', 'seven']))).toBe("option --max-zoom needs a whole number, got 'seven'");
    expect(usageMessage(() => parseArgs('build', ['--max-zoom=2.5']))).toMatch(/whole number/);
    expect(usageMessage(() => parseArgs('build', ['--memory-budget', 'lots']))).toMatch(/--memory-budget needs a size such as 512M/);
    expect(usageMessage(() => parseArgs('build', ['--lod', 'some']))).toBe("option --lod must be one of auto, none, got 'some'");
  });

  it('missing values, unknown flags (with a suggestion), flags of another command', () => {
    expect(usageMessage(() => parseArgs('build', ['--out']))).toBe('option --out needs a value (DIR)');
    expect(usageMessage(() => parseArgs('build', ['--out', '--force']))).toBe('option --out needs a value (DIR)');
    expect(usageMessage(() => parseArgs('validate', ['--jsno']))).toBe('unknown option --jsno for validate; did you mean --json?');
    expect(usageMessage(() => parseArgs('validate', ['--frobnicate']))).toBe('unknown option --frobnicate for validate');
    expect(usageMessage(() => parseArgs('validate', ['--out', 'x']))).toBe('option --out does not apply to validate (it is for build, plan, extract)');
    expect(usageMessage(() => parseArgs('validate', ['-z']))).toMatch(/unknown option -z for validate/);
  });

  it('negative numbers and - are values; -- ends options', () => {
    expect(parseArgs('build', ['--min-zoom', '-1']).options).toEqual({ minZoom: -1 });
    expect(parseArgs('validate', ['--', '--json', '-q']).positionals).toEqual(['--json', '-q']);
  });

  it('every option of every command parses from its generated flag name', () => {
    for (const { name: command } of COMMANDS) {
      for (const [name, spec] of optionsOf(command)) {
        const sample = { boolean: [], integer: ['3'], bytes: ['1M'], list: ['x'], string: [spec.choices?.[0] ?? 'x'] }[spec.type];
        const parsed = parseArgs(command, [`--${flagName(name)}`, ...sample]).options as Record<string, unknown>;
        expect(parsed[name], `${command} --${flagName(name)}`).toBeDefined();
      }
    }
  });
});

describe('help', () => {
  it('lists every command, and every option a command accepts with its flag, argument and default', () => {
    const general = generalHelp();
    for (const c of COMMANDS) expect(general).toContain(`  ${c.name} `);
    for (const c of COMMANDS) {
      const text = commandHelp(c);
      expect(text).toMatch(new RegExp(`^Usage: mudm-tiles ${c.name} \\[options\\]`));
      for (const [name, spec] of Object.entries(OPTIONS) as [string, OptionSpec][]) {
        expect(new RegExp(`^ {2}(?:-\\w, | {4})--${flagName(name)}(?![\\w-])`, 'm').test(text), `${c.name} --${flagName(name)}`).toBe(spec.commands.includes(c.name));
      }
    }
    const build = commandHelp(commandInfo('build')!);
    expect(build).toContain('-o, --out DIR');
    expect(build).toContain('--lod auto|none');
    expect(build).toMatch(/--memory-budget BYTES[\s\S]*\(default: 1G\)/);
    expect(build).toMatch(/--input DIMS:FILE[\s\S]*\(repeatable\)/);
  });
});

describe('exit codes', () => {
  it('maps error classes to codes', () => {
    expect([EXIT_OK, EXIT_INVALID, EXIT_USAGE, EXIT_UNREADABLE, EXIT_OUTPUT, EXIT_INTERNAL]).toEqual([0, 1, 2, 3, 4, 5]);
    expect(exitCodeFor(new UsageError('x'))).toBe(EXIT_USAGE);
    expect(exitCodeFor(new ReadError('f', 1, 2, 'bad'))).toBe(EXIT_UNREADABLE);
    expect(exitCodeFor(new InputError('x'))).toBe(EXIT_UNREADABLE);
    expect(exitCodeFor(new DataError('x'))).toBe(EXIT_INVALID);
    expect(exitCodeFor(new OutputError('x'))).toBe(EXIT_OUTPUT);
    expect(exitCodeFor(new TypeError('bug'))).toBe(EXIT_INTERNAL);
    expect(exitCodeFor('thrown string')).toBe(EXIT_INTERNAL);
    expect(exitCodeFor(new ImageError('slide.tif', 'no such file'))).toBe(EXIT_UNREADABLE);
    expect(exitCodeFor(new WorkStateError('no plan'))).toBe(EXIT_OUTPUT);
    // An error of a second copy of the module (a bundler, a test) maps by its shape.
    expect(exitCodeFor(Object.assign(new Error('x'), { exitCode: EXIT_OUTPUT }))).toBe(EXIT_OUTPUT);
  });

  it('describes located errors as file:line:column and bugs with their stack', () => {
    expect(describeError(new ReadError('a.json', 3, 7, 'unexpected x'))).toBe('a.json:3:7: unexpected x');
    expect(describeError(new ReadError('a.json', 0, 0, 'no such file'))).toBe('a.json: no such file');
    expect(describeError(new TypeError('boom'))).toMatch(/^internal error: TypeError: boom\n\s+at /);
  });
});
