// The CLI's view of the outside world (streams, environment, directory), passed in so commands are testable in memory.

/** Where text goes: `process.stdout`/`process.stderr`, or a string collector in tests. */
export interface TextSink {
  write(text: string): unknown;
  /** True when a person is watching (progress lines are drawn only then). */
  isTTY?: boolean;
}

export interface CliIO {
  stdout: TextSink;
  stderr: TextSink;
  /** Read by commands given `-` as a file. */
  stdin: AsyncIterable<Uint8Array | string>;
  env: Record<string, string | undefined>;
  cwd: string;
}

/** Everything written, as strings, for tests: `memoryIO({ stdin: '...' })`. */
export interface MemoryIO extends CliIO {
  out(): string;
  err(): string;
}

export function memoryIO(init: { stdin?: string | Uint8Array; env?: Record<string, string | undefined>; cwd?: string } = {}): MemoryIO {
  const out: string[] = [];
  const err: string[] = [];
  const input = init.stdin ?? '';
  return {
    stdout: { write: (t: string) => out.push(t), isTTY: false },
    stderr: { write: (t: string) => err.push(t), isTTY: false },
    stdin: (async function* () {
      if (input.length > 0) yield typeof input === 'string' ? new TextEncoder().encode(input) : input;
    })(),
    env: init.env ?? {},
    cwd: init.cwd ?? '.',
    out: () => out.join(''),
    err: () => err.join(''),
  };
}
