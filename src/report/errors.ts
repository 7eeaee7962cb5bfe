// Errors with stable codes: the CLI maps each class to an exit code; library code only throws them.

/** Input data violates the spec (with --strict), or a document is invalid. Exit 1. */
export class DataError extends Error {
  readonly code = 'invalid-data';
}

/** Bad options or arguments. Exit 2. */
export class UsageError extends Error {
  readonly code = 'usage';
}

/** An input cannot be read or is not JSON. Exit 3. */
export class InputError extends Error {
  readonly code = 'input-unreadable';
  constructor(message: string, readonly file?: string, readonly line?: number, readonly column?: number) {
    super(message);
  }
}

/** The output cannot be written: exists without --force, disk full, permission denied, a file in the way. Exit 4. */
export class OutputError extends Error {
  readonly code = 'output';
  constructor(message: string, readonly path?: string) {
    super(message);
  }
}

/** The build was stopped by a signal; the work directory is kept for --resume. */
export class InterruptedError extends Error {
  readonly code = 'interrupted';
}

/**
 * Describes a Node.js file-system error as the path and what went wrong, for OutputError messages; `role` says what
 * the path is for when the user may not know it (spilled work units).
 */
export function describeFsError(err: unknown, path: string, role?: string): OutputError {
  if (err instanceof OutputError) return err;
  const code = (err as { code?: string }).code;
  const why = code === 'ENOSPC' ? 'no space left on device'
    : code === 'EACCES' || code === 'EPERM' ? 'permission denied'
    : code === 'ENOTDIR' || code === 'EEXIST' ? 'a file is in the way of a directory'
    : code === 'EROFS' ? 'read-only file system'
    : err instanceof Error ? err.message : String(err);
  return new OutputError(`cannot write ${path}${role ? ` (${role})` : ''}: ${why}`, path);
}
