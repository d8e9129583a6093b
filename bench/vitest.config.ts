/**
 * The benchmarks run under vitest (which compiles the TypeScript test server on the fly) but
 * never in `npm test`: the root config includes only `test/**\/*.test.ts`.
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  root: fileURLToPath(new URL('..', import.meta.url)),
  test: {
    include: ['bench/**/*.bench-run.ts'],
    testTimeout: 600_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
    // The figures are written straight to the terminal.
    disableConsoleIntercept: true,
    reporters: ['default'],
  },
});
