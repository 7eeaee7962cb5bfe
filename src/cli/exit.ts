// Exit codes of the CLI and the mapping from error classes to them, so every command ends the same way.
import { ReadError } from '../io/read.js';
import { DataError, InputError, InterruptedError, OutputError, UsageError } from '../report/errors.js';

export const EXIT_OK = 0;
/** Invalid input data: a document fails validation, or any invalid feature with --strict. */
export const EXIT_INVALID = 1;
export const EXIT_USAGE = 2;
/** An input cannot be read or is not JSON. */
export const EXIT_UNREADABLE = 3;
/** The output cannot be written: exists without --force, disk full, permission. */
export const EXIT_OUTPUT = 4;
export const EXIT_INTERNAL = 5;
/** Stopped by SIGINT/SIGTERM: the shell convention 128 + SIGINT, which workflow engines read as "interrupted". */
export const EXIT_INTERRUPTED = 130;

const BY_CODE: Record<string, number> = {
  'invalid-data': EXIT_INVALID,
  usage: EXIT_USAGE,
  'input-unreadable': EXIT_UNREADABLE,
  output: EXIT_OUTPUT,
  interrupted: EXIT_INTERRUPTED,
};

/** The exit code for an error that ended a command; anything unforeseen is an internal error. */
export function exitCodeFor(error: unknown): number {
  if (error instanceof UsageError) return EXIT_USAGE;
  if (error instanceof ReadError || error instanceof InputError) return EXIT_UNREADABLE;
  if (error instanceof DataError) return EXIT_INVALID;
  if (error instanceof OutputError) return EXIT_OUTPUT;
  if (error instanceof InterruptedError) return EXIT_INTERRUPTED;
  // By shape too: a second copy of the error module (tests, bundlers) must map the same way.
  if (error !== null && typeof error === 'object') {
    const { exitCode, code } = error as { exitCode?: unknown; code?: unknown };
    if (typeof exitCode === 'number' && Number.isInteger(exitCode)) return exitCode;
    if (typeof code === 'string' && code in BY_CODE) return BY_CODE[code];
  }
  return EXIT_INTERNAL;
}

/** What to print for an error: located errors as `file:line:column: message`, internal ones with their stack. */
export function describeError(error: unknown): string {
  if (error instanceof ReadError) return `${error.where}: ${error.message}`;
  if (error instanceof Error) {
    if (exitCodeFor(error) !== EXIT_INTERNAL) return error.message;
    return `internal error: ${error.stack ?? error.message}`;
  }
  return `internal error: ${String(error)}`;
}
