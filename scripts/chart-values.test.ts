import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { limits, SERVICES, type ServiceRow } from '@rundown/shared';

/** The chart restates a few facts of the code (ports, defaults); this keeps the two from drifting apart. */
interface Block {
  terminationGracePeriodSeconds?: number;
  lifecycleHooks?: { preStop?: { exec?: { command?: string[] } } };
  containerPorts: Record<string, number>;
  service: { ports: Record<string, number> };
  migrations?: { enabled?: boolean };
  secretEnv: string[];
  config: Record<string, unknown>;
}
const chartValues = parse(readFileSync(resolve(import.meta.dirname, '../charts/rundown/values.yaml'), 'utf8')) as {
  config: { shutdown: { delayMs: number; graceMs: number } };
};
const values = parse(readFileSync(resolve(import.meta.dirname, '../charts/rundown/values.yaml'), 'utf8')) as Record<string, Block | undefined>;
const secretSettings = new Set(['DATABASE_URL', 'REDIS_URL', 'JWT_PRIVATE_KEYS', 'V0_TOKEN_SECRET', 'CURSOR_SECRET']);

describe('the chart agrees with the code', () => {
  it('has the anonymous rate limit of limits.ts', () => {
    expect(values.gateway?.config.anonRateLimitPerMinute).toBe(limits.anonymousRequestsPerMinute);
  });

  it.each((SERVICES as readonly ServiceRow[]).map((row) => [row.name, row] as const))('has a values block for %s with the table’s ports and secrets', (name, row) => {
    const block = values[name];
    if (!block) throw new Error(`charts/rundown/values.yaml has no ${name} block`);
    expect(block.containerPorts.grpc).toBe(row.grpcPort);
    expect(block.service.ports.grpc).toBe(row.grpcPort);
    expect(block.containerPorts['grpc-admin']).toBe(row.adminGrpcPort);
    expect(block.service.ports['grpc-admin']).toBe(row.adminGrpcPort);
    expect(block.migrations?.enabled ?? false).toBe(row.migrations);
    for (const setting of row.settings.filter((s) => secretSettings.has(s))) expect(block.secretEnv).toContain(setting);
  });
});

describe('graceful shutdown fits in every pod\'s grace period', () => {
  it.each((SERVICES as readonly ServiceRow[]).map((row) => row.name).concat('gateway'))('%s: preStop pause + delay + grace < terminationGracePeriodSeconds', (name) => {
    const block = values[name]!;
    const { delayMs, graceMs } = chartValues.config.shutdown;
    const command = block.lifecycleHooks?.preStop?.exec?.command ?? [];
    const pauseMs = command[0] === 'sleep' ? Number(command[1]) * 1000 : 0;
    expect(pauseMs + delayMs + graceMs).toBeLessThan((block.terminationGracePeriodSeconds ?? 30) * 1000);
  });
});
