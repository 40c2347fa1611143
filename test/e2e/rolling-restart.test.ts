import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICES } from '@rundown/shared';
import { formatReport, rollingRestart, topShare } from '../../scripts/chaos/rolling.js';
import { ensureBuilt } from '../../scripts/launcher/build.js';
import { freePorts } from '../../scripts/launcher/child.js';
import { loadSecrets } from '../../scripts/launcher/secrets.js';
import { resolvePorts } from '../../scripts/launcher/services.js';
import { createDatabase, isolatedRedis, startInfra, type TestInfra } from '../support/infra.js';

// A rolling restart under steady mixed load, the short variant of `npm run chaos -- --rolling`
// (scripts/chaos/rolling.ts): two replicas of every service in the local scale-out (each on its own
// loopback address, internal gRPC through one DNS name per service, gateways behind a balancer),
// every replica replaced one at a time, gateway included. Short timings: connections aged out every
// 3 s (the chart: 30 s), 1 s not ready but serving before the drain (the chart: a 5 s pause and 5 s).

let infra: TestInfra;
let database: Awaited<ReturnType<typeof createDatabase>>;
let redisUrl: string;
const dataDir = mkdtempSync(join(tmpdir(), 'rundown-rolling-'));

beforeAll(async () => {
  await ensureBuilt();
  infra = await startInfra();
  database = await createDatabase(infra.postgresServerUrl, 'rundown_rolling');
  // A Redis db of its own: the timer queue must not be shared with another system's runners.
  redisUrl = await isolatedRedis(infra.redisUrl, Number(process.env.E2E_ROLLING_REDIS_DB ?? 12));
}, 600_000);

afterAll(async () => {
  await database?.drop().catch(() => undefined);
  rmSync(dataDir, { recursive: true, force: true });
  await infra?.stop();
}, 60_000);

describe('a rolling restart of every replica of every service under load', () => {
  it('fails no request, loses and doubles no write, fires every timer once, keeps live clients whole and spreads calls', async () => {
    const report = await rollingRestart({
      databaseUrl: database.url,
      redisUrl,
      secrets: (await loadSecrets(dataDir, {})).secrets,
      ports: resolvePorts(await freePorts()).ports,
      replicas: 2,
      steadyMs: 8_000,
      maxConnectionAgeMs: 3_000,
      shutdownDelayMs: 1_000,
      shutdownGraceMs: 15_000,
      lagMs: 300,
      note: (line) => console.log(line),
    }).catch((error: unknown) => {
      // A replica that would not start or answer: its last output says why.
      const details = (error as { details?: string }).details;
      if (details) console.error(details);
      throw error;
    });
    console.log(formatReport(report));
    // Every replica of every service behind the gateway, and the gateway's.
    expect(report.steps).toHaveLength((SERVICES.length + 1) * 2);
    expect(report.steps.every((s) => s.exitCode === 0)).toBe(true);
    expect(report.requests).toBeGreaterThan(500);
    expect(report.failures).toEqual([]);
    const v = report.verification;
    expect({ lost: v.lost, duplicated: v.duplicated, cellsLost: v.cellsLost, editsLost: v.editsLost, bulksLost: v.bulksLost }).toEqual({
      lost: 0,
      duplicated: 0,
      cellsLost: 0,
      editsLost: 0,
      bulksLost: 0,
    });
    expect(v.deadlines).toBeGreaterThan(10);
    expect(v.scheduledStarts).toBeGreaterThan(3);
    expect(v.sseDisconnects).toBeGreaterThan(0);
    expect(v.sseCut).toBe(0);
    for (const [service, rows] of [...Object.entries(report.spreadBefore), ...Object.entries(report.spreadAfter)]) {
      expect(rows.length, service).toBe(2);
      expect(topShare(rows), `${service}: ${JSON.stringify(rows)}`).toBeLessThanOrEqual(0.7);
    }
    expect(report.violations).toEqual([]);
  }, 900_000);
});
