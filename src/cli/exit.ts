// The end of every command: an error's exit code (each class in src/report/errors.ts names its own) and what to print.
import { EXIT_INTERNAL, EXIT_USAGE } from '../report/errors.js';

export { EXIT_OK, EXIT_INVALID, EXIT_USAGE, EXIT_UNREADABLE, EXIT_OUTPUT, EXIT_INTERNAL, EXIT_INTERRUPTED } from '../report/errors.js';

/** The exit code for an error that ended a command; anything unforeseen is an internal error. */
export function exitCodeFor(error: unknown): number {
  // By shape, not by class: a second copy of the error module (tests, bundlers) must map the same way.
  if (error !== null && typeof error === 'object') {
    const { exitCode } = error as { exitCode?: unknown };
    if (typeof exitCode === 'number' && Number.isInteger(exitCode)) return exitCode;
  }
  return EXIT_INTERNAL;
}

/**
 * Whether an error of exit 2 is followed by the pointer to `--help`: a mistake in the command line is; a step refused
 * by the state of its output (StateUsageError) is not, its message says what to run. By shape, as `exitCodeFor`.
 */
export function pointsToHelp(error: unknown): boolean {
  return exitCodeFor(error) === EXIT_USAGE && (error === null || typeof error !== 'object' || (error as { pointsToHelp?: unknown }).pointsToHelp !== false);
}

/** What to print for an error: its message (a ReadError's starts with `file:line:column`), internal ones with their stack. */
export function describeError(error: unknown): string {
  if (error instanceof Error) {
    if (exitCodeFor(error) !== EXIT_INTERNAL) return error.message;
    return `internal error: ${error.stack ?? error.message}`;
  }
  return `internal error: ${String(error)}`;
}
