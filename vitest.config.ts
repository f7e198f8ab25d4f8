import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // Node resolves `graphql` (no "exports" field) to its CommonJS build, and so do the
    // dependencies vitest leaves to Node; vite would pick the ESM build for our own files, and
    // graphql refuses objects from the other build. Make both sides use the one Node uses.
    alias: { graphql: 'graphql/index.js' },
  },
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/setup.ts'],
    pool: 'forks',
    // Each file starts its own service (embedded database or its own PostgreSQL schema).
    fileParallelism: true,
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
