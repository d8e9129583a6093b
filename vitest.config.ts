import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Subprocess contract tests and the test servers share two cores; a few forks suffice.
    pool: 'forks',
    maxWorkers: 3,
    // A PostgreSQL cluster for the stores' suite (started here unless ZOTEUS_TEST_DATABASE_URL names one).
    globalSetup: ['./test/support/postgres-setup.ts'],
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
