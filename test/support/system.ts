import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
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

export interface StartOptions {
  /** Prefix of the private database (and data folder) of this run. */
  databasePrefix: string;
  /** Redis logical db of this run (flushed); separate checkouts running at once pick different ones. */
  redisDb: number;
  logLevel?: string;
  /** Echo the launcher's output. */
  verbose?: boolean;
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
 * The whole system, started through the same launcher as `npm start`, on free ports with a
 * database and Redis db of its own. `stop` is the Ctrl-C equivalent and drops what the run made.
 * Used by the e2e tier and the benchmarks.
 */
export async function startSystem(options: StartOptions): Promise<{ system: SystemUnderTest; stop(): Promise<void> }> {
  const infra = await startInfra();
  const database = await createDatabase(infra.postgresServerUrl, options.databasePrefix);
  const redisUrl = await isolatedRedis(infra.redisUrl, options.redisDb);
  const dataDir = mkdtempSync(join(tmpdir(), `${options.databasePrefix}-`));
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
    LOG_LEVEL: options.logLevel ?? 'warn',
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
    if (options.verbose) process.stderr.write(chunk);
  });
  const ready = await new Promise<Record<string, unknown>>((resolveReady, reject) => {
    const timer = setTimeout(() => reject(new Error(`system did not start in 120 s:\n${output.join('').slice(-4000)}`)), 120_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`launcher exited with ${code} before ready:\n${output.join('').slice(-4000)}`));
    });
    createInterface({ input: child.stdout! }).on('line', (line) => {
      output.push(`${line}\n`);
      if (options.verbose) process.stdout.write(`${line}\n`);
      if (line.startsWith('LAUNCHER_READY ')) {
        clearTimeout(timer);
        resolveReady(JSON.parse(line.slice('LAUNCHER_READY '.length)) as Record<string, unknown>);
      }
    });
  });
  child.removeAllListeners('exit');
  const publicUrl = `http://127.0.0.1:${http}`;
  const system: SystemUnderTest = {
    baseUrl: `${publicUrl}/v1`,
    publicUrl,
    adminUrl: `http://127.0.0.1:${admin}/admin`,
    adminSecret: String(ready.admin_secret),
    redisUrl,
    databaseUrl: database.url,
    startupMs: Date.now() - started,
    launcher: ready,
  };
  const stop = async () => {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGINT');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
    if (child.exitCode === null) child.kill('SIGKILL');
    await database.drop().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
    await infra.stop();
  };
  return { system, stop };
}
