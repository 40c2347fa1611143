import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
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
  config: { shutdown: { preStopSeconds: number; delayMs: number; graceMs: number }; grpc: { maxConnectionAgeMs: number; maxConnectionAgeGraceMs: number } };
};
const values = parse(readFileSync(resolve(import.meta.dirname, '../charts/rundown/values.yaml'), 'utf8')) as Record<string, Block | undefined>;
const secretSettings = new Set(['DATABASE_URL', 'REDIS_URL', 'JWT_PRIVATE_KEYS', 'V0_TOKEN_SECRET', 'CURSOR_SECRET', 'WEBHOOKS_SECRET_KEYS']);

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
    const { preStopSeconds, delayMs, graceMs } = chartValues.config.shutdown;
    const command = block.lifecycleHooks?.preStop?.exec?.command ?? ['sleep', String(preStopSeconds)];
    const pauseMs = command[0] === 'sleep' ? Number(command[1]) * 1000 : 0;
    expect(pauseMs).toBeGreaterThan(0);
    expect(pauseMs + delayMs + graceMs).toBeLessThan((block.terminationGracePeriodSeconds ?? 30) * 1000);
  });

  it('lets a gRPC call in flight outlive every caller\'s deadline (5 s) and fit in the drain', () => {
    const { maxConnectionAgeMs, maxConnectionAgeGraceMs } = chartValues.config.grpc;
    expect(maxConnectionAgeGraceMs).toBeGreaterThan(5_000);
    expect(maxConnectionAgeGraceMs).toBeLessThanOrEqual(chartValues.config.shutdown.graceMs);
    expect(maxConnectionAgeMs).toBeGreaterThan(0);
  });
});

interface Manifest {
  kind: string;
  metadata: { name: string; namespace?: string };
  data?: Record<string, string>;
  spec?: { clusterIP?: string; ports?: { port: number }[]; strategy?: { rollingUpdate?: { maxUnavailable?: number } } };
}

/** The chart as `helm template` renders it for production (no cluster needed). */
function render(...args: string[]): Manifest[] {
  const helm = resolve(import.meta.dirname, '../node_modules/.bin/helm');
  const out = execFileSync(helm, ['template', 'rundown', resolve(import.meta.dirname, '../charts/rundown'), '--namespace', 'live', '--kube-version', '1.27.0',
    '-f', resolve(import.meta.dirname, '../deploy/values/production.yaml'), ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return parseAllDocuments(out).map((d) => d.toJS() as Manifest).filter(Boolean);
}

describe('the rendered chart', () => {
  const manifests = render();
  const headless = new Map(manifests.filter((m) => m.kind === 'Service' && m.spec?.clusterIP === 'None').map((m) => [m.metadata.name, m]));
  const addresses = manifests
    .filter((m) => m.kind === 'ConfigMap')
    .flatMap((m) => Object.entries(m.data ?? {}).filter(([key]) => key.endsWith('_ADDR')).map(([key, value]) => ({ where: `${m.metadata.name} ${key}`, value })));

  it('points every internal address at a headless Service by a dns:/// name, on a port it has', () => {
    expect(addresses.length).toBeGreaterThan(10);
    for (const { where, value } of addresses) {
      const m = /^dns:\/\/\/([a-z0-9-]+)\.live\.svc\.cluster\.local:(\d+)$/.exec(value);
      expect(m, `${where}: ${value}`).not.toBeNull();
      const service = headless.get(m![1]!);
      expect(service, `${where}: ${m![1]} is not a headless Service`).toBeDefined();
      expect(service!.spec!.ports!.map((p) => p.port), where).toContain(Number(m![2]));
    }
    // The admin ports likewise.
    expect(addresses.filter((a) => a.where.endsWith('_ADMIN_ADDR')).length).toBeGreaterThanOrEqual(3);
  });

  it('rolls every Deployment without taking a pod down first', () => {
    const deployments = manifests.filter((m) => m.kind === 'Deployment');
    // The gateway and every service of the table its values enable (derived: a new row adds one).
    const enabled = SERVICES.filter((row) => (chartValues as unknown as Record<string, { enabled?: boolean }>)[row.name]?.enabled !== false);
    expect(deployments.length).toBe(enabled.length + 1);
    for (const d of deployments) expect(d.spec?.strategy?.rollingUpdate?.maxUnavailable, d.metadata.name).toBe(0);
    expect(manifests.filter((m) => m.kind === 'PodDisruptionBudget').length).toBe(deployments.length);
  });

  it('refuses a render whose pods would be killed while they drain', () => {
    expect(() => render('--set', 'config.shutdown.preStopSeconds=30')).toThrow(/terminationGracePeriodSeconds/);
  });
});
