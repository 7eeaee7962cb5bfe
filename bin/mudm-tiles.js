#!/usr/bin/env node
// Command-line entry: runs the compiled CLI and turns its result into the process exit status (the only process.exit).
let main;
try {
  ({ main } = await import('../dist/cli/main.js'));
} catch (e) {
  if (e && e.code === 'ERR_MODULE_NOT_FOUND' && String(e.url ?? e.message).includes('dist/cli/main.js')) {
    process.stderr.write("mudm-tiles: dist/ is missing; run 'npm run build' first\n");
    process.exit(5);
  }
  throw e;
}

// `mudm-tiles validate big.json | head` closes the pipe early: that is the reader's choice, not a crash.
process.stdout.on('error', (e) => {
  if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw e;
});

const code = await main(process.argv.slice(2));
process.exitCode = code;
// Let stdout and stderr drain first (pipes are asynchronous), then exit even if a worker pool or timer lingers.
await Promise.all([process.stdout, process.stderr].map((s) => new Promise((resolve) => s.write('', resolve))));
process.exit(code);
