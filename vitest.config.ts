import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const shared = fileURLToPath(new URL('./services/shared/src/', import.meta.url));

/**
 * Four tiers under one command (`npm test`; `npm run test:<tier>` runs one):
 * - unit: no I/O, beside the code (services/<svc>/src/**\/*.test.ts; the gateway's page: viewer/src)
 * - medium: a service's domain and repositories wired as the service wires them (its wiring.ts),
 *   against real PostgreSQL and Redis, no transport, no gateway (test/medium)
 * - integration: real PostgreSQL and Redis across the shared library and the services' transports
 *   (testcontainers when a Docker engine answers, otherwise the servers the environment names,
 *   otherwise the local defaults)
 * - e2e: the whole system started through the same launcher as `npm start`, spoken to over HTTP
 * - e2e-cluster: a subset of e2e with the system on a Redis Cluster (test/support/redis-harness.ts)
 * - e2e-sentinel: the Redis failover under load, the system on a Sentinel group
 * The integration and e2e tiers stop after each file what its tests started and left running
 * (test/support/stop-started.ts), also when a test timed out before its own stop.
 */
export default defineConfig({
  // Tests run the TypeScript sources of the shared library, as `--conditions=source` does for the services.
  resolve: {
    alias: [
      { find: /^@rundown\/shared\/proto\/(.*)$/, replacement: `${shared}generated/$1.ts` },
      { find: /^@rundown\/shared\/telemetry$/, replacement: `${shared}telemetry.ts` },
      { find: /^@rundown\/shared\/services$/, replacement: `${shared}services.ts` },
      { find: /^@rundown\/shared\/redis$/, replacement: `${shared}redis.ts` },
      { find: /^@rundown\/shared\/cell-text$/, replacement: `${shared}cell-text.ts` },
      { find: /^@rundown\/shared$/, replacement: `${shared}index.ts` },
    ],
  },
  test: {
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['services/*/src/**/*.test.ts', 'services/*/viewer/src/**/*.test.ts', 'scripts/**/*.test.ts'], environment: 'node' },
      },
      {
        extends: true,
        test: {
          name: 'medium',
          include: ['test/medium/**/*.test.ts'],
          globalSetup: ['test/support/integration-setup.ts'],
          testTimeout: 30_000,
          hookTimeout: 120_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/support/integration-setup.ts'],
          setupFiles: ['test/support/stop-started.ts'],
          testTimeout: 30_000,
          hookTimeout: 120_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          globalSetup: ['test/support/e2e-setup.ts'],
          setupFiles: ['test/support/stop-started.ts'],
          testTimeout: 30_000,
          hookTimeout: 180_000,
          // One system for the whole tier; files share it, so run them one at a time.
          fileParallelism: false,
        },
      },
      {
        extends: true,
        test: {
          // A stated subset of the e2e tier on a 3-primary Redis Cluster (docs/testing.md#redis-cluster-and-sentinel):
          // tokens and revocation, the runner with timed cues, SSE with replay, the domain events and
          // their index, v0 push over two realtime replicas, idempotency, rate limits.
          name: 'e2e-cluster',
          include: [
            'test/e2e/edge-auth.test.ts',
            'test/e2e/runner.test.ts',
            'test/e2e/runner-live.test.ts',
            'test/e2e/sse.test.ts',
            'test/e2e/events.test.ts',
            'test/e2e/v0-scale-out.test.ts',
            'test/e2e/edge-idempotency.test.ts',
            'test/e2e/edge-rate-limit.test.ts',
          ],
          globalSetup: ['test/support/e2e-cluster-setup.ts'],
          setupFiles: ['test/support/stop-started.ts'],
          testTimeout: 30_000,
          hookTimeout: 180_000,
          fileParallelism: false,
          // After the other tiers, not beside them: two whole systems at once would slow both.
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          // The Redis primary killed (-9) under load, the system on a Sentinel group of its own
          // (1 primary, 1 replica, 3 sentinels): test/e2e/redis-failover.test.ts (skipped elsewhere).
          name: 'e2e-sentinel',
          include: ['test/e2e/redis-failover.test.ts'],
          globalSetup: ['test/support/e2e-sentinel-setup.ts'],
          setupFiles: ['test/support/stop-started.ts'],
          testTimeout: 90_000,
          hookTimeout: 180_000,
          fileParallelism: false,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
