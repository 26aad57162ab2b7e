import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    environment: 'node',
    include: ['test/**/*.test.ts'],
    exclude: ['test/bench/**', '**/node_modules/**'],
    testTimeout: 30_000,
    // Generous: a suite's beforeAll may create databases, topics or consumer groups on real servers.
    hookTimeout: 120_000,
    // Separate processes: suites open sockets and servers that must not share one event loop.
    pool: 'forks',
    // The machines (developers' and CI's) have 2 cores.
    maxWorkers: 2,
  },
});
