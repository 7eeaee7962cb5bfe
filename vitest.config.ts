// Test runner settings: node environment, generous timeouts for end-to-end builds, forks for isolation, and a fresh
// dist/ before every run (workers and CLI processes run the compiled code).
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/setup-temps.ts'],
    environment: 'node',
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Vitest runs one file at a time on 2 cores by default (the cores less one); most files wait on child processes,
    // browsers and signals, so two at once shorten the run.
    maxWorkers: 2,
  },
});
