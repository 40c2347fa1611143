import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { limits, SERVICES, type ServiceRow } from '@rundown/shared';

/** The chart restates a few facts of the code (ports, defaults); this keeps the two from drifting apart. */
interface Block {
  containerPorts: Record<string, number>;
  service: { ports: Record<string, number> };
  migrations?: { enabled?: boolean };
  secretEnv: string[];
  config: Record<string, unknown>;
}
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
