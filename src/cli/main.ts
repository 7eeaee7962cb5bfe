// CLI entry: picks the command, parses its options from the registry, runs it, and turns every outcome into an exit code.
import { readFileSync } from 'node:fs';
import { resolveOptions, type Command } from '../options.js';
import { UsageError } from '../report/errors.js';
import { closest } from '../suggest.js';
import { parseArgs } from './args.js';
import { COMMANDS, commandInfo, loadCommand } from './commands/index.js';
import { EXIT_INTERNAL, EXIT_OK, EXIT_USAGE, describeError, exitCodeFor, pointsToHelp } from './exit.js';
import { commandHelp, generalHelp } from './help.js';
import type { CliIO } from './io.js';
import { createLogger, type LogFormat } from './log.js';

export type { CliIO } from './io.js';

/** The real process: the only place besides bin/ that reaches for `process`. */
export function processIO(): CliIO {
  return { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env, cwd: process.cwd() };
}

/** Runs one command line (without the program name) and resolves to the exit code; never throws, never exits. */
export async function main(argv: readonly string[], io: CliIO = processIO()): Promise<number> {
  let log = createLogger(io.stderr, 'text');
  let command: Command | undefined;
  try {
    const [first, ...rest] = argv;
    if (first === undefined) {
      io.stderr.write(generalHelp());
      return EXIT_USAGE;
    }
    if (first === '--help' || first === '-h') {
      io.stdout.write(generalHelp());
      return EXIT_OK;
    }
    if (first === 'help') {
      const topic = rest[0] === undefined ? undefined : commandInfo(rest[0]);
      if (rest[0] !== undefined && !topic) throw unknownCommand(rest[0]);
      io.stdout.write(topic ? commandHelp(topic, (await loadCommand(topic.name)) ?? {}) : generalHelp());
      return EXIT_OK;
    }
    if (first === '--version' || first === '-V' || first === 'version') {
      io.stdout.write(`${version()}\n`);
      return EXIT_OK;
    }
    if (first.startsWith('-')) throw new UsageError(`expected a command before ${first}; run 'mudm-tiles --help' for the list`);
    const info = commandInfo(first);
    if (!info) throw unknownCommand(first);
    command = info.name;
    const parsed = parseArgs(info.name, rest);
    const options = resolveOptions(parsed.options);
    log = createLogger(io.stderr, options.log as LogFormat, options.quiet);
    const mod = await loadCommand(info.name);
    if (options.help) {
      io.stdout.write(commandHelp(info, mod ?? {}));
      return EXIT_OK;
    }
    if (!mod) {
      log.error(`the ${info.name} command is not available in this build`);
      return EXIT_INTERNAL;
    }
    return await mod.run({ command: info.name, options, given: parsed.options, args: parsed.positionals, io, log });
  } catch (e) {
    const code = exitCodeFor(e);
    const fields: Record<string, unknown> = { exitCode: code };
    if (e !== null && typeof e === 'object') {
      for (const key of ['file', 'line', 'column', 'path'] as const) {
        const v = (e as Record<string, unknown>)[key];
        if (v !== undefined) fields[key] = v;
      }
    }
    log.error(describeError(e), fields);
    if (pointsToHelp(e) && log.format === 'text') {
      io.stderr.write(`Run 'mudm-tiles ${command ?? ''}${command ? ' ' : ''}--help' for usage.\n`);
    }
    return code;
  }
}

function unknownCommand(name: string): UsageError {
  // `help COMMAND` is a command to people too.
  const near = closest(name, [...COMMANDS.map((c) => c.name), 'help']);
  return new UsageError(
    `unknown command '${name}'${near ? `; did you mean '${near}'?` : ''} (commands: ${COMMANDS.map((c) => c.name).join(', ')})`,
  );
}

function version(): string {
  try {
    // dist/cli/main.js and src/cli/main.ts both sit two levels below the package root.
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string };
    return `mudm-tiles ${pkg.version ?? 'unknown'}`;
  } catch {
    return 'mudm-tiles (version unknown)';
  }
}
