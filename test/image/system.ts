import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { freePorts, type LauncherReady } from '../../scripts/launcher/child.js';
import { grpcHealth, httpReady, waitForReady } from '../../scripts/launcher/health.js';
import { loadSecrets } from '../../scripts/launcher/secrets.js';
import { addresses, adminUrl, grpcPort, HOST, publicUrl, resolvePorts, SERVICES, serviceEnv, type ServiceContext, type ServiceSpec } from '../../scripts/launcher/services.js';
import { log, serviceCommand } from '../../scripts/launcher/util.js';
import type { SystemUnderTest } from '../support/e2e-setup.js';
import { createDatabase, isolatedRedis, startInfra } from '../support/infra.js';

/** What the image tier knows about the containers it started, besides the system's URLs. */
export interface ImageRun {
  image: string;
  /** Container name per service. */
  containers: Record<string, string>;
}

declare module 'vitest' {
  export interface ProvidedContext {
    imageRun: ImageRun;
  }
}

export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs podman (or any command) to completion; the environment is added to this process's own. */
export function podman(args: readonly string[], env: Record<string, string> = {}, timeoutMs = 120_000): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('podman', args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function podmanOk(args: readonly string[], env: Record<string, string> = {}, timeoutMs?: number): Promise<string> {
  const result = await podman(args, env, timeoutMs);
  if (result.code !== 0) throw new Error(`podman ${args.slice(0, 2).join(' ')} failed (${result.code}):\n${result.stderr}${result.stdout}`.trimEnd());
  return result.stdout;
}

/**
 * How every container of the system runs, as the chart runs the pods: host network (the local
 * PostgreSQL and Redis, loopback ports), the image's own user (never overridden), a read-only root
 * filesystem with a tmpfs on /tmp only (podman's default extra tmpfs mounts turned off), no
 * capabilities, no privilege escalation. Settings reach the container by name (`--env NAME`, the
 * value taken from podman's own environment), so secrets never appear on a command line.
 */
function runArgs(name: string, runId: string, env: Record<string, string>): string[] {
  return [
    '--name',
    name,
    '--label',
    `rundown.image-run=${runId}`,
    '--network',
    'host',
    '--read-only',
    '--read-only-tmpfs=false',
    '--tmpfs',
    '/tmp:rw,nosuid,nodev,size=64m',
    '--cap-drop',
    'ALL',
    '--security-opt',
    'no-new-privileges',
    ...Object.keys(env).flatMap((key) => ['--env', key]),
  ];
}

/**
 * Image tier: the whole system from the built image (IMAGE), one container per service, started
 * with the launcher's own tables (services, ports, settings, secrets), migrations by each image's
 * `migrate` command first; free ports, a throw-away database and Redis db IMAGE_REDIS_DB (default
 * 12). Provides the same `system` as the e2e tier, so its client helpers work unchanged.
 */
export default async function setup(project: TestProject) {
  const image = process.env.IMAGE ?? 'localhost/rundown:dev';
  const runId = process.env.IMAGE_RUN_ID ?? `${Date.now()}-${process.pid}`;
  const logDir = process.env.IMAGE_LOG_DIR;
  const infra = await startInfra();
  // Named after the run, so scripts/image.sh can drop it even when this process is killed.
  const database = await createDatabase(infra.postgresServerUrl, `rundown_image_${runId.replace(/\W/g, '_')}`);
  const redisUrl = await isolatedRedis(infra.redisUrl, Number(process.env.IMAGE_REDIS_DB ?? 12));
  const dataDir = mkdtempSync(join(tmpdir(), `rundown-image-${runId}-`));
  const env: NodeJS.ProcessEnv = { ...process.env, ...(await freePorts()), LOG_LEVEL: process.env.IMAGE_LOG_LEVEL ?? 'warn' };
  const { ports } = resolvePorts(env);
  const { secrets } = await loadSecrets(dataDir, env);
  const ctx: ServiceContext = { env, databaseUrl: database.url, redisUrl, secrets, ports };
  const containers: Record<string, string> = {};
  const started: string[] = [];

  const envOf = (service: ServiceSpec): Record<string, string> => {
    // The image sets NODE_ENV=production; the launcher's development default stays out.
    const { NODE_ENV: _development, ...rest } = serviceEnv(service, ctx);
    return rest;
  };

  const stop = async () => {
    if (started.length === 0) return;
    if (logDir) mkdirSync(logDir, { recursive: true });
    await Promise.all(
      started.map(async (name) => {
        await podman(['stop', '--time', '10', name]);
        if (logDir) {
          const logs = await podman(['logs', name]);
          writeFileSync(join(logDir, `${name}.log`), logs.stdout + logs.stderr);
        }
        await podman(['rm', '--force', name]);
      }),
    );
    started.length = 0;
  };

  try {
    // 1. Migrations: each service's own `migrate` command, in a throw-away container, all at once.
    const migrating = Date.now();
    await Promise.all(
      SERVICES.filter((service) => service.migrate).map(async (service) => {
        const serviceEnvironment = envOf(service);
        const { entry } = serviceCommand(service.name, 'compiled');
        const name = `rundown-${runId}-migrate-${service.name}`;
        await podmanOk(['run', '--rm', ...runArgs(name, runId, serviceEnvironment), image, entry, 'migrate'], serviceEnvironment, 300_000);
      }),
    );
    log(`migrated ${SERVICES.filter((s) => s.migrate).map((s) => s.name).join(', ')} (${Date.now() - migrating} ms)`);

    // 2. Every service, detached, all at once (each waits for its peers by itself, as in a cluster).
    const starting = Date.now();
    await Promise.all(
      SERVICES.map(async (service) => {
        const serviceEnvironment = envOf(service);
        const { entry } = serviceCommand(service.name, 'compiled');
        const name = `rundown-${runId}-${service.name}`;
        started.push(name);
        containers[service.name] = name;
        await podmanOk(['run', '--detach', ...runArgs(name, runId, serviceEnvironment), image, entry], serviceEnvironment);
      }),
    );
    log(`started ${SERVICES.length} containers (${Date.now() - starting} ms)`);

    // 3. Readiness, as the launcher judges it: gRPC health, the gateway's /readyz.
    const explain = (service: string) => `  (podman logs ${containers[service] ?? '?'})`;
    await waitForReady(
      SERVICES.map((service) => ({
        name: service.name,
        probe: service.ready === 'http' ? () => httpReady(`${publicUrl(ports)}/readyz`) : () => grpcHealth(`${HOST}:${grpcPort(ports, service.name)}`),
      })),
      Number(process.env.IMAGE_READY_TIMEOUT_SECONDS ?? 180) * 1000,
      explain,
    );
  } catch (error) {
    for (const name of started) {
      const logs = await podman(['logs', '--tail', '40', name]);
      process.stderr.write(`--- ${name}\n${logs.stdout}${logs.stderr}\n`);
    }
    await stop();
    await database.drop().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }

  const ready: LauncherReady = {
    http_port: ports.http,
    admin_port: ports.admin,
    grpc_ports: ports.grpc,
    metrics_ports: {},
    addresses: addresses(ports),
    internal_context_keys: secrets.INTERNAL_CONTEXT_KEYS,
    public_url: publicUrl(ports),
    base_url: `${publicUrl(ports)}/v1`,
    admin_url: adminUrl(ports),
    database_url: database.url,
    redis_url: redisUrl,
    admin_secret: secrets.ADMIN_SECRET,
    v0_token_secret: secrets.V0_TOKEN_SECRET,
    demo_token: null,
    demo_team_id: null,
    data_dir: dataDir,
    ready_ms: Math.round(performance.now()),
    pid: process.pid,
  };
  const system: SystemUnderTest = {
    baseUrl: ready.base_url,
    publicUrl: ready.public_url,
    adminUrl: ready.admin_url,
    adminSecret: ready.admin_secret,
    redisUrl,
    redisEnv: { REDIS_URL: redisUrl },
    databaseUrl: database.url,
    startupMs: ready.ready_ms,
    launcher: ready,
    gatewayEnv: {
      ...ready.addresses,
      INTERNAL_CONTEXT_KEYS: ready.internal_context_keys,
      REDIS_URL: redisUrl,
      ADMIN_SECRET: ready.admin_secret,
      V0_TOKEN_SECRET: ready.v0_token_secret,
      TOKEN_ENVIRONMENT: env.TOKEN_ENVIRONMENT ?? 'local',
    },
  };
  project.provide('system', system);
  project.provide('imageRun', { image, containers });

  return async () => {
    await stop();
    await database.drop().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
    await infra.stop();
  };
}
