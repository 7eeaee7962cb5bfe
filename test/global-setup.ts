// Vitest global setup: compiles src/ into dist/ before any test runs, because the code tests reach through worker
// threads (piscina loads dist/worker/entry.js) and child processes (bin/mudm-tiles.js) is the compiled code; without
// this a test could pass against the last build instead of the sources under test.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

export default function setup(): void {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const root = fileURLToPath(new URL('..', import.meta.url));
  // Incremental (tsconfig.build.json keeps its build info in dist/): a second run with nothing changed takes seconds.
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
}
