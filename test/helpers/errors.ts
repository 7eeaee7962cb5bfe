// Checks that a call throws the error class it should, with the exit code the CLI would end with; gives its message.
import { expect } from 'vitest';
import { exitCodeFor } from '../../src/cli/exit.js';

export function refusal(f: () => unknown, kind: abstract new (...args: never[]) => Error, exitCode: number): string {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(kind);
    expect(exitCodeFor(e)).toBe(exitCode);
    return (e as Error).message;
  }
  throw new Error(`expected a ${kind.name}`);
}
