import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/support/fastCheckSeed.ts'],
    // Numerical fixtures (n up to 3312) and real Redis round trips take seconds, not milliseconds.
    testTimeout: 120_000,
    hookTimeout: 60_000,
    // Two cores: run test files in two forked processes.
    pool: 'forks',
    maxWorkers: 2,
  },
});
