// Every error class of the library with its stable code and exit code: library code only throws them, and the CLI
// (src/cli/exit.ts) turns what it catches into the exit code the class names.

export const EXIT_OK = 0;
/** Invalid input data: a document fails validation, or any invalid feature with --strict. */
export const EXIT_INVALID = 1;
export const EXIT_USAGE = 2;
/** An input cannot be read or is not JSON. */
export const EXIT_UNREADABLE = 3;
/** The output cannot be written (exists without --force, disk full, permission), or its work directory is unusable. */
export const EXIT_OUTPUT = 4;
export const EXIT_INTERNAL = 5;
/** Stopped by SIGINT/SIGTERM: the shell convention 128 + SIGINT, which workflow engines read as "interrupted". */
export const EXIT_INTERRUPTED = 130;

/** Input data violates the spec (with --strict), or a document is invalid. Exit 1. */
export class DataError extends Error {
  override readonly name: string = 'DataError';
  readonly code = 'invalid-data';
  readonly exitCode = EXIT_INVALID;
}

/**
 * One value of an input (a feature, or a whole top-level value) is larger than the memory budget allows one value:
 * found while it is read, before it is held whole. Exit 1, like any data the build cannot take.
 */
export class ValueTooLargeError extends DataError {
  override readonly name = 'ValueTooLargeError';
  constructor(readonly file: string, readonly line: number, readonly column: number, what: string, readonly limit: number, why: string) {
    super(`${file}:${line}:${column}: ${what} is larger than ${limit} bytes, ${why}`);
  }
}

/** Bad options or arguments. Exit 2. */
export class UsageError extends Error {
  override readonly name: string = 'UsageError';
  readonly code = 'usage';
  readonly exitCode = EXIT_USAGE;
}

/**
 * A step refused by what its output holds (a plain build's work directory to a shard, a finished pyramid, an
 * interrupted build of other inputs to --resume), not by a mistake in its command line: exit 2 as a usage error, as
 * nothing was touched and another command is needed, which its message names; `--help` has nothing to add.
 */
export class StateUsageError extends UsageError {
  override readonly name = 'StateUsageError';
  /** Read by shape by the CLI (cli/exit.ts `pointsToHelp`), as exit codes are. */
  readonly pointsToHelp = false;
}

/** An input cannot be read or is not JSON. Exit 3. */
export class InputError extends Error {
  override readonly name: string = 'InputError';
  readonly code = 'input-unreadable';
  readonly exitCode = EXIT_UNREADABLE;
  constructor(message: string, readonly file?: string, readonly line?: number, readonly column?: number) {
    super(message);
  }
}

/**
 * A syntax or I/O error in an input, found by the reader. `line` and `column` are 1-based and point at the offending
 * byte (columns count bytes, which is characters for ASCII); both are 0 when no position applies (a file that cannot
 * be opened). The message starts with the place, `where`, so that a library caller who prints it has it too;
 * `reason` is the message without it. Exit 3.
 */
export class ReadError extends Error {
  override readonly name = 'ReadError';
  readonly code = 'input-unreadable';
  readonly exitCode = EXIT_UNREADABLE;
  constructor(
    readonly file: string,
    readonly line: number,
    readonly column: number,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`${line > 0 ? `${file}:${line}:${column}` : file}: ${reason}`, options);
  }

  /** `file:line:column` (or just the file when there is no position), the way compilers and editors expect it. */
  get where(): string {
    return this.line > 0 ? `${this.file}:${this.line}:${this.column}` : this.file;
  }
}

/** An image that cannot be used (--image, a label mask, a preview background): missing, unreadable, or of a kind this tool does not take. Exit 3. */
export class ImageError extends InputError {
  override readonly name = 'ImageError';
  constructor(readonly path: string, readonly reason: string) {
    super(`${path}: ${reason}`, path);
  }
}

/** The output cannot be written: exists without --force, disk full, permission denied, a file in the way. Exit 4. */
export class OutputError extends Error {
  override readonly name: string = 'OutputError';
  readonly code: string = 'output';
  readonly exitCode = EXIT_OUTPUT;
  /** `errno`: the file system's code (ENOSPC, EACCES, …) when a system call on `path` failed. */
  constructor(message: string, readonly path?: string, readonly errno?: string) {
    super(message);
  }
}

/**
 * The work directory of a build (OUT/.mudm-work) lacks what a step needs (the plan, a shard, a unit's marker or
 * records) or was written by another version of mudm-tiles. Exit 4, like any other problem with the output.
 */
export class WorkStateError extends OutputError {
  override readonly name = 'WorkStateError';
  override readonly code = 'work-state';
}

/** The build was stopped by a signal; the work directory is kept for --resume. Exit 130 (143 for SIGTERM, set by the CLI). */
export class InterruptedError extends Error {
  override readonly name = 'InterruptedError';
  readonly code = 'interrupted';
  readonly exitCode = EXIT_INTERRUPTED;
  /** Whether the build left state that `--resume` continues (false: stopped while reading, before its plan). */
  constructor(message: string, readonly resumable = true) {
    super(message);
  }
}

/** A system call's error code (ENOSPC), not Node's own codes for misuse (ERR_INVALID_ARG_TYPE). */
export function systemCode(code: unknown): string | undefined {
  return typeof code === 'string' && /^E[A-Z0-9]+$/.test(code) ? code : undefined;
}

/**
 * --force could not remove a file or folder that an earlier build wrote (an immutable file, a folder the user may not
 * write): what it removed before stays removed, `removed` files. Exit 4, as any output problem; the step that ran the
 * removal adds how to go on (build/output.ts `beginOutput`), and then `advised`.
 */
export class RemovalError extends OutputError {
  override readonly name = 'RemovalError';
  constructor(message: string, path: string, errno: string | undefined, readonly removed: number, readonly advised = false) {
    super(message, path, errno);
  }
}

/** What a file-system error's code means, in words; `message` for one not foreseen. */
function fsReason(code: string | undefined, err: unknown): string {
  return code === 'ENOSPC' ? 'no space left on device'
    : code === 'EDQUOT' ? 'disk quota exceeded'
    : code === 'EACCES' || code === 'EPERM' ? 'permission denied'
    : code === 'ENOTDIR' || code === 'EEXIST' ? 'a file is in the way of a directory'
    : code === 'EROFS' ? 'read-only file system'
    : err instanceof Error ? err.message : String(err);
}

/**
 * Describes a Node.js file-system error as the path and what went wrong, for OutputError messages; `role` says what
 * the path is for when the user may not know it (spilled work units); `doing`: what failed, when it is no write (a
 * spilled file read back).
 */
export function describeFsError(err: unknown, path: string, role?: string, doing = 'write'): OutputError {
  if (err instanceof OutputError) return err;
  const code = (err as { code?: string }).code;
  return new OutputError(`cannot ${doing} ${path}${role ? ` (${role})` : ''}: ${fsReason(code, err)}`, path, systemCode(code));
}

/**
 * `path`, which an earlier build wrote, could not be removed (after `removed` other files were). A root user is
 * refused only by an attribute (EPERM: immutable or append-only, which lsattr shows), so that is named.
 */
export function removalError(err: unknown, path: string, removed: number): RemovalError {
  const code = (err as { code?: string }).code;
  const why = code === 'EPERM' ? 'operation not permitted (it or its folder is immutable or append-only, as lsattr -d shows, or it may not be removed by this user)'
    : code === 'EACCES' ? 'permission denied (its folder is not writable)'
    : code === 'EISDIR' ? 'it is a folder now, which no build made' : fsReason(code, err);
  return new RemovalError(`cannot remove ${path}, which an earlier build wrote: ${why}`, path, systemCode(code), removed);
}
