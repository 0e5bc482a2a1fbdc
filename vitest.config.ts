import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Tests import the shared library from source, so `vitest` needs no build first.
const alias = {
  '@offsetsync/contracts': fileURLToPath(new URL('./packages/contracts/src/index.ts', import.meta.url)),
  '@offsetsync/jetstream': fileURLToPath(new URL('./packages/jetstream/src/index.ts', import.meta.url)),
  '@offsetsync/runtime': fileURLToPath(new URL('./packages/runtime/src/index.ts', import.meta.url)),
  '@offsetsync/kafka': fileURLToPath(new URL('./packages/kafka/src/index.ts', import.meta.url)),
  '@offsetsync/testbed': fileURLToPath(new URL('./packages/testbed/src/index.ts', import.meta.url)),
  '@offsetsync/harness': fileURLToPath(new URL('./packages/harness/src/index.ts', import.meta.url)),
};

export default defineConfig({
  resolve: { alias },
  test: {
    projects: [
      {
        resolve: { alias },
        test: {
          name: 'unit',
          include: [
            'packages/*/src/**/*.test.ts',
            'services/*/src/**/*.test.ts',
            'cli/src/**/*.test.ts',
            'test/unit/**/*.test.ts',
            'bench/**/*.test.ts',
          ],
          environment: 'node',
        },
      },
      {
        resolve: { alias },
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts', 'test/e2e/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/infra/vitest-global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 180_000,
          // Every test shares the same two brokers and NATS server; files run one after the other so a
          // 2-core machine is not oversubscribed and timing-sensitive assertions stay meaningful.
          fileParallelism: false,
        },
      },
    ],
  },
});
