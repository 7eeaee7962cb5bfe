// What a command module receives and must export: the contract between main.ts and src/cli/commands/<name>.ts.
import type { Command, Options } from '../options.js';
import type { CliIO } from './io.js';
import type { Logger } from './log.js';

export interface CommandContext {
  command: Command;
  /** Every option, defaults filled in from the registry. */
  options: Options;
  /** Only what the user gave, to tell "left at its default" from "set to the default". */
  given: Partial<Options>;
  /** Positional arguments (files, directories); `-` means stdin. */
  args: string[];
  io: CliIO;
  /** stderr in the --log format, quiet when --quiet. */
  log: Logger;
}

/**
 * A command lives in `src/cli/commands/<name>.ts` and exports `run`, resolving to the exit code (constants in
 * `../exit.js`). It may throw the classes of `src/report/errors.ts` (or a ReadError): main maps them to exit codes
 * and prints them. Optional `usage`/`summary`/`details` override the registry's help texts.
 */
export interface CommandModule {
  run(ctx: CommandContext): Promise<number>;
  usage?: string;
  summary?: string;
  details?: string;
}
