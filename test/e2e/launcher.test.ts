import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import pg from 'pg';
import type { QueryRunner } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations as runnerMigrations } from '../../services/runner/src/migrations/index.js';
import { freePorts, startSystem } from '../../scripts/launcher/child.js';
import { NODE_ARGS } from '../../scripts/launcher/util.js';
import { call } from '../support/client.js';
import { createDatabase, isolatedRedis, startInfra, type TestInfra } from '../support/infra.js';

/** Runs `work` on one connection to `url`. */
async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

function portAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Alive and not a zombie (a reparented process may wait a while to be reaped). */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

let infra: TestInfra;
let database: Awaited<ReturnType<typeof createDatabase>>;
let redisUrl: string;
const dataDir = mkdtempSync(join(tmpdir(), 'rundown-launcher-'));
/** Every system the test started: stopped here too, so a failed or timed-out test leaves none running. */
const started: { stop(): Promise<void> }[] = [];

beforeAll(async () => {
  infra = await startInfra();
  database = await createDatabase(infra.postgresServerUrl, 'rundown_launcher');
  // A Redis db of its own: the suite's other systems must not share its streams and consumer groups.
  redisUrl = await isolatedRedis(infra.redisUrl, Number(process.env.E2E_LAUNCHER_REDIS_DB ?? 11));
});

afterAll(async () => {
  await Promise.all(started.map((s) => s.stop()));
  await database.drop();
  rmSync(dataDir, { recursive: true, force: true });
  await infra.stop();
});

describe('the one command (npm start)', () => {
  it('brings everything up with a demo token, stops cleanly on Ctrl-C, and a second run reuses the data and migrates what is behind', async () => {
    const ports = await freePorts();
    const env = { ...ports, DATABASE_URL: database.url, REDIS_URL: redisUrl, DATA_DIR: dataDir, LOG_LEVEL: 'warn' };

    const first = await startSystem({ env, demo: true });
    started.push(first);
    // A fresh database: every service migrated, saying why.
    for (const name of ['auth', 'rundown', 'cells', 'runner', 'webhooks']) expect(first.output()).toContain(`migrating ${name} (no migrations table yet)`);
    const token = first.ready.demo_token!;
    expect(token).toBeTruthy();
    const created = await call(`${first.ready.base_url}/rundowns`, 'POST', { token, body: { title: 'Survives a restart' } });
    expect(created.status).toBe(201);
    await first.stop();
    expect(first.exitCode()).toBe(0);
    for (const port of Object.values(ports)) expect(await portAnswers(Number(port)), `port ${port} still open`).toBe(false);

    // The runner's schema as it was before its latest migration (reverted as TypeORM would: its `down`,
    // then its record): the next start migrates the runner, and only it, as a database behind needs.
    const latest = new (runnerMigrations.at(-1)!)();
    await withClient(database.url, async (client) => {
      await latest.down({ query: (sql: string) => client.query(sql) } as unknown as QueryRunner);
      await client.query('DELETE FROM runner.migrations WHERE name = $1', [latest.name]);
    });

    const second = await startSystem({ env, demo: true });
    started.push(second);
    try {
      expect(second.output()).toContain(`migrating runner (pending: ${latest.name})`);
      expect(second.output()).toContain('migrations already applied: auth, rundown, cells, webhooks');
      const recorded = await withClient(database.url, async (client) => (await client.query<{ name: string }>('SELECT name FROM runner.migrations')).rows.map((r) => r.name));
      expect(recorded).toContain(latest.name);
      expect(second.ready.demo_team_id).toBe(first.ready.demo_team_id);
      expect(second.ready.demo_token).toBe(token);
      const read = await call(`${second.ready.base_url}/rundowns/${created.body.data.id}`, 'GET', { token });
      expect(read.status).toBe(200);
      expect(read.body.data.title).toBe('Survives a restart');
    } finally {
      await second.stop();
    }
  }, 300_000); // two cold starts of six services: about 15 s each on an idle 2-core machine, minutes under load

  it('stops by itself, services and all, when the process that started it dies without stopping it', async () => {
    const ports = await freePorts();
    const env = { ...ports, DATABASE_URL: database.url, REDIS_URL: redisUrl, DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
    // A parent of its own, as a test worker is: it starts the system, then is killed (-9).
    const script = `const { startSystem } = await import('./scripts/launcher/child.ts');
      const system = await startSystem({ env: JSON.parse(process.env.SYSTEM_ENV) });
      process.stdout.write('READY ' + system.ready.pid + '\\n');
      setInterval(() => undefined, 1000);`;
    const parent = spawn(process.execPath, [...NODE_ARGS, '--input-type=module', '-e', script], {
      cwd: resolve(import.meta.dirname, '../..'),
      env: { ...process.env, SYSTEM_ENV: JSON.stringify(env) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let launcherPid: number | undefined;
    try {
      launcherPid = await new Promise<number>((resolveReady, reject) => {
        parent.once('exit', (code) => reject(new Error(`the parent exited (${code}) before the system was ready`)));
        createInterface({ input: parent.stdout! }).on('line', (line) => {
          if (line.startsWith('READY ')) resolveReady(Number(line.slice(6)));
        });
      });
      expect(running(launcherPid)).toBe(true);
      parent.kill('SIGKILL');
      const deadline = Date.now() + 30_000;
      const open = async () => (await Promise.all(Object.values(ports).map((p) => portAnswers(Number(p))))).some(Boolean);
      while (Date.now() < deadline && (running(launcherPid) || (await open()))) await new Promise((r) => setTimeout(r, 250));
      expect(running(launcherPid), 'the launcher outlived its parent').toBe(false);
      expect(await open(), 'a service outlived the launcher').toBe(false);
    } finally {
      if (parent.exitCode === null && parent.signalCode === null) parent.kill('SIGKILL');
      if (launcherPid !== undefined && running(launcherPid)) process.kill(launcherPid, 'SIGINT');
    }
  }, 120_000);
});
