import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { TestProject } from 'vitest/node';
import { createDatabase, isolatedRedis, startInfra } from './infra.js';

export interface SystemUnderTest {
  baseUrl: string;
  publicUrl: string;
  adminUrl: string;
  adminSecret: string;
  redisUrl: string;
  databaseUrl: string;
  startupMs: number;
  /** Everything the launcher's LAUNCHER_READY line said (ports, urls, secrets). */
  launcher: Record<string, unknown>;
}

declare module 'vitest' {
  export interface ProvidedContext {
    system: SystemUnderTest;
  }
}

const root = resolve(import.meta.dirname, '../..');

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolvePort(address.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * End-to-end tier: the whole system, started through the same launcher as `npm start`, on
 * free ports with a database and Redis db of its own; stopped (Ctrl-C equivalent) at the end.
 */
export default async function setup(project: TestProject) {
  const infra = await startInfra();
  const database = await createDatabase(infra.postgresServerUrl, 'rundown_e2e');
  // Separate checkouts running tests at once pick different dbs (E2E_REDIS_DB).
  const redisUrl = await isolatedRedis(infra.redisUrl, Number(process.env.E2E_REDIS_DB ?? 15));
  const dataDir = mkdtempSync(join(tmpdir(), 'rundown-e2e-'));
  const [http, admin, gw, auth, rundown] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()]);
  const env = {
    ...process.env,
    DATABASE_URL: database.url,
    REDIS_URL: redisUrl,
    DATA_DIR: dataDir,
    HTTP_PORT: String(http),
    ADMIN_PORT: String(admin),
    GATEWAY_GRPC_PORT: String(gw),
    AUTH_GRPC_PORT: String(auth),
    RUNDOWN_GRPC_PORT: String(rundown),
    LOG_LEVEL: process.env.E2E_LOG_LEVEL ?? 'warn',
    DEMO: '0',
  };
  const started = Date.now();
  const child: ChildProcess = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', 'scripts/start.ts', '--no-demo'], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  child.stderr?.on('data', (chunk: Buffer) => {
    output.push(chunk.toString());
    if (process.env.E2E_VERBOSE) process.stderr.write(chunk);
  });
  const ready = await new Promise<Record<string, unknown>>((resolveReady, reject) => {
    const timer = setTimeout(() => reject(new Error(`system did not start in 120 s:\n${output.join('').slice(-4000)}`)), 120_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`launcher exited with ${code} before ready:\n${output.join('').slice(-4000)}`));
    });
    createInterface({ input: child.stdout! }).on('line', (line) => {
      output.push(`${line}\n`);
      if (process.env.E2E_VERBOSE) process.stdout.write(`${line}\n`);
      if (line.startsWith('LAUNCHER_READY ')) {
        clearTimeout(timer);
        resolveReady(JSON.parse(line.slice('LAUNCHER_READY '.length)) as Record<string, unknown>);
      }
    });
  });
  child.removeAllListeners('exit');
  const publicUrl = `http://127.0.0.1:${http}`;
  project.provide('system', {
    baseUrl: `${publicUrl}/v1`,
    publicUrl,
    adminUrl: `http://127.0.0.1:${admin}/admin`,
    adminSecret: String(ready.admin_secret),
    redisUrl,
    databaseUrl: database.url,
    startupMs: Date.now() - started,
    launcher: ready,
  });
  return async () => {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGINT');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
    if (child.exitCode === null) child.kill('SIGKILL');
    await database.drop().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
    await infra.stop();
  };
}
