// PostgreSQL and Redis for local runs: use what the environment names, else what answers on the
// default ports, else start private servers from the machine's own binaries inside DATA_DIR.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, existsSync, openSync } from 'node:fs';
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { createRedis, redisSettingsFrom, type RedisSettings } from '@rundown/shared/redis';
import pg from 'pg';
import {
  type Cleanup,
  errorCode,
  errorMessage,
  findExecutable,
  lastLines,
  LauncherError,
  log,
  portFree,
  redactUrl,
  run,
  shellQuote,
  sleep,
  warn,
} from './util.js';

export const LOCAL_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/rundown';
export const PRIVATE_POSTGRES_PORT = 55432;
export const LOCAL_REDIS_URL = 'redis://127.0.0.1:6379';
export const PRIVATE_REDIS_PORT = 56379;
const DEFAULT_DATABASE = 'rundown';

export interface InfraOptions {
  dataDir: string;
  env: NodeJS.ProcessEnv;
  cleanup: Cleanup;
  /** Overridable so the fallback paths can be exercised while real servers run on the defaults. */
  localUrl?: string;
  privatePort?: number;
}

export interface Endpoint {
  url: string;
  /** Where it came from, for the banner. */
  source: 'env' | 'local' | 'private';
}

// ---------------------------------------------------------------- PostgreSQL

function withDatabase(url: string, database: string | undefined): string {
  if (database === undefined || database === '') return url;
  const parsed = new URL(url);
  parsed.pathname = `/${encodeURIComponent(database)}`;
  return parsed.href;
}

async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  client.on('error', () => undefined); // a dropped connection surfaces through the query instead
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

const quoteIdent = (name: string): string => `"${name.replaceAll('"', '""')}"`;

/** Connects to the database in `url`, creating it (via the `postgres` database) if it is missing. */
async function ensureDatabase(url: string): Promise<'existed' | 'created'> {
  try {
    await withClient(url, (c) => c.query('select 1'));
    return 'existed';
  } catch (error) {
    if (errorCode(error) !== '3D000') throw error; // 3D000: database does not exist
  }
  const name = decodeURIComponent(new URL(url).pathname.slice(1));
  const maintenance = withDatabase(url, 'postgres');
  await withClient(maintenance, async (c) => {
    try {
      await c.query(`CREATE DATABASE ${quoteIdent(name)}`);
    } catch (error) {
      if (errorCode(error) !== '42P04') throw error; // 42P04: created meanwhile by a parallel run
    }
  });
  return 'created';
}

export async function ensurePostgres(options: InfraOptions): Promise<Endpoint> {
  const { env } = options;
  const database = env.DATABASE_NAME || undefined; // empty counts as unset
  if (env.DATABASE_URL !== undefined && env.DATABASE_URL !== '') {
    const url = withDatabase(env.DATABASE_URL, database);
    try {
      if ((await ensureDatabase(url)) === 'created') log(`created database ${new URL(url).pathname.slice(1)}`);
    } catch (error) {
      throw new LauncherError(`DATABASE_URL (${redactUrl(url)}) cannot be used: ${errorMessage(error)}`);
    }
    return { url, source: 'env' };
  }

  const local = withDatabase(options.localUrl ?? LOCAL_POSTGRES_URL, database ?? DEFAULT_DATABASE);
  try {
    if ((await ensureDatabase(local)) === 'created') log(`created database ${new URL(local).pathname.slice(1)}`);
    return { url: local, source: 'local' };
  } catch (error) {
    const where = new URL(local).host;
    if (errorCode(error) !== 'ECONNREFUSED') {
      warn(`PostgreSQL on ${where} answers but cannot be used (${errorMessage(error)}); starting a private one`);
    }
  }

  const port = options.privatePort ?? PRIVATE_POSTGRES_PORT;
  await startPrivatePostgres(options.dataDir, port, options.cleanup);
  const url = `postgres://postgres@127.0.0.1:${port}/${encodeURIComponent(database ?? DEFAULT_DATABASE)}`;
  await ensureDatabase(url);
  return { url, source: 'private' };
}

interface PostgresBin {
  dir: string;
  major: number;
}

async function postgresMajor(pgCtl: string): Promise<number | undefined> {
  const result = await run(pgCtl, ['--version']).catch(() => undefined);
  const match = result?.output.match(/\(PostgreSQL\)\s+(\d+)/);
  return match?.[1] !== undefined ? Number(match[1]) : undefined;
}

/** initdb + pg_ctl from Debian's versioned folders, RHEL's /usr/pgsql-N, or PATH (Homebrew, etc.). */
async function findPostgresBins(): Promise<PostgresBin[]> {
  const dirs: string[] = [];
  for (const [parent, pattern] of [
    ['/usr/lib/postgresql', /^\d+$/],
    ['/usr', /^pgsql-\d+$/],
  ] as const) {
    const entries = await readdir(parent).catch(() => [] as string[]);
    for (const entry of entries) if (pattern.test(entry)) dirs.push(path.join(parent, entry, 'bin'));
  }
  const onPath = findExecutable('pg_ctl');
  if (onPath !== undefined) dirs.push(path.dirname(onPath));

  const found: PostgresBin[] = [];
  for (const dir of new Set(dirs)) {
    const pgCtl = path.join(dir, 'pg_ctl');
    if (!existsSync(pgCtl) || !existsSync(path.join(dir, 'initdb'))) continue;
    const major = await postgresMajor(pgCtl);
    if (major !== undefined) found.push({ dir, major });
  }
  return found.sort((a, b) => b.major - a.major);
}

type AsPostgres = (file: string, args: string[]) => [string, string[]];

/**
 * PostgreSQL refuses to run as root, so as root its tools run as the `postgres` user
 * (runuser where present, su otherwise); as anyone else they run directly.
 */
async function postgresRunner(): Promise<{ as: AsPostgres; user: string | undefined }> {
  if (process.getuid?.() !== 0) return { as: (file, args) => [file, args], user: undefined };
  const user = 'postgres';
  const id = await run('id', ['-u', user]);
  if (id.code !== 0) {
    throw new LauncherError(
      `PostgreSQL refuses to run as root and there is no '${user}' user to run it as.\n` +
        `  Create one (useradd --system --create-home ${user}), run npm start as a normal user, or set DATABASE_URL.`,
    );
  }
  const runuser = findExecutable('runuser');
  if (runuser !== undefined) return { as: (file, args) => [runuser, ['-u', user, '--', file, ...args]], user };
  return {
    as: (file, args) => ['su', [user, '-s', '/bin/sh', '-c', [file, ...args].map(shellQuote).join(' ')]],
    user,
  };
}

/** Unix sockets are limited to ~107 bytes; deep DATA_DIRs fall back to a per-folder dir in /tmp. */
function socketDir(root: string, port: number): string {
  const preferred = path.join(root, 'run');
  if (path.join(preferred, `.s.PGSQL.${port}`).length < 100) return preferred;
  const hash = createHash('sha256').update(root).digest('hex').slice(0, 12);
  return path.join(os.tmpdir(), `rundown-pg-${hash}`);
}

/**
 * Stops the private PostgreSQL of `dataDir` (`immediate`: as a crash would, no checkpoint); the
 * fault tests restart it with `startPrivatePostgres`.
 */
export async function stopPrivatePostgres(dataDir: string, mode: 'fast' | 'immediate'): Promise<void> {
  const root = path.join(dataDir, 'postgres');
  const pgdata = path.join(root, 'data');
  const major = Number((await readFile(path.join(pgdata, 'PG_VERSION'), 'utf8')).trim());
  const bin = (await findPostgresBins()).find((b) => b.major === major);
  if (bin === undefined) throw new LauncherError(`no PostgreSQL ${major} binaries to stop ${pgdata} with`);
  const runner = await postgresRunner();
  const [cmd, argv] = runner.as(path.join(bin.dir, 'pg_ctl'), ['stop', '-D', pgdata, '-m', mode, '-w', '-t', '30']);
  const stop = await run(cmd, argv, { cwd: root, timeoutMs: 60_000 });
  if (stop.code !== 0) throw new LauncherError('pg_ctl stop failed', lastLines(stop.output, 10));
}

export async function startPrivatePostgres(dataDir: string, port: number, cleanup: Cleanup): Promise<void> {
  const root = path.join(dataDir, 'postgres');
  const pgdata = path.join(root, 'data');
  const logFile = path.join(root, 'server.log');
  const sockets = socketDir(root, port);

  const versionFile = path.join(pgdata, 'PG_VERSION');
  const clusterMajor = existsSync(versionFile) ? Number((await readFile(versionFile, 'utf8')).trim()) : undefined;
  const bins = await findPostgresBins();
  if (bins.length === 0) {
    throw new LauncherError(
      'No PostgreSQL answers on 127.0.0.1:5432 and no PostgreSQL server binaries (initdb, pg_ctl) were found\n' +
        '  in /usr/lib/postgresql/*/bin, /usr/pgsql-*/bin or PATH. Install PostgreSQL\n' +
        '  (Debian/Ubuntu: sudo apt-get install postgresql; Fedora: sudo dnf install postgresql-server;\n' +
        '  macOS: brew install postgresql), or point DATABASE_URL at a server.',
    );
  }
  // An existing cluster can only be opened by its own major version.
  const bin = clusterMajor === undefined ? bins[0] : bins.find((b) => b.major === clusterMajor);
  if (bin === undefined) {
    throw new LauncherError(
      `${pgdata} was created by PostgreSQL ${clusterMajor}, but only ${bins.map((b) => b.major).join(', ')} is installed.\n` +
        `  Install PostgreSQL ${clusterMajor}, or delete ${root} to start with an empty database.`,
    );
  }
  const pgCtl = path.join(bin.dir, 'pg_ctl');
  const initdb = path.join(bin.dir, 'initdb');
  const runner = await postgresRunner();
  // cwd inside the folder: as the postgres user, the repo folder may not be readable.
  const pgRun = (file: string, args: string[], timeoutMs = 120_000) => {
    const [cmd, argv] = runner.as(file, args);
    return run(cmd, argv, { cwd: root, timeoutMs });
  };

  await mkdir(root, { recursive: true });
  await mkdir(sockets, { recursive: true });
  if (runner.user !== undefined) {
    const chown = await run('chown', ['-R', `${runner.user}:`, root, sockets]);
    if (chown.code !== 0) throw new LauncherError(`could not hand ${root} to the ${runner.user} user`, chown.output);
    const access = await pgRun('test', ['-w', root]);
    if (access.code !== 0) {
      throw new LauncherError(
        `the ${runner.user} user cannot reach ${root} (a parent folder is not searchable by it).\n` +
          `  Set DATA_DIR to a folder it can reach (e.g. /var/tmp/rundown-data), or set DATABASE_URL.`,
      );
    }
  }

  if (clusterMajor === undefined) {
    // No PG_VERSION: never initialised, or an initdb that died half-way; start clean.
    await rm(pgdata, { recursive: true, force: true });
    log(`initialising a private PostgreSQL ${bin.major} in ${pgdata}`);
    const init = await pgRun(initdb, ['-D', pgdata, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C']);
    if (init.code !== 0) throw new LauncherError('initdb failed', lastLines(init.output, 30));
  }

  const status = await pgRun(pgCtl, ['status', '-D', pgdata]);
  if (status.code === 0) {
    // Left running by a launcher that did not get to stop it; adopt it and stop it this time.
    log(`reusing the private PostgreSQL already running from ${pgdata}`);
  } else {
    if (!(await portFree(port))) {
      throw new LauncherError(
        `port ${port} (private PostgreSQL) is in use by another program.\n` +
          '  Stop it, start PostgreSQL on 5432, or set DATABASE_URL.',
      );
    }
    log(`starting a private PostgreSQL ${bin.major} on 127.0.0.1:${port} (data in ${pgdata})`);
    const serverOptions = `-p ${port} -c listen_addresses=127.0.0.1 -k ${shellQuote(sockets)}`;
    const start = await pgRun(pgCtl, ['start', '-D', pgdata, '-l', logFile, '-w', '-t', '60', '-o', serverOptions]);
    if (start.code !== 0) {
      const serverLog = await readFile(logFile, 'utf8').catch(() => '');
      throw new LauncherError('the private PostgreSQL did not start', lastLines(`${start.output}\n${serverLog}`, 30));
    }
  }
  cleanup.add('private PostgreSQL', async () => {
    log('stopping the private PostgreSQL');
    const stop = await pgRun(pgCtl, ['stop', '-D', pgdata, '-m', 'fast', '-w', '-t', '30']);
    if (stop.code !== 0) warn(`pg_ctl stop failed: ${lastLines(stop.output, 5)}`);
  });
}

// ---------------------------------------------------------------- Redis

/** One PING with a short timeout and no retries: "does a usable Redis answer here?" */
export async function redisPing(url: string): Promise<{ ok: true } | { ok: false; reason: string; refused: boolean }> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 1000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
  // The socket error (e.g. ECONNREFUSED) arrives here; connect() itself only says "Connection is closed".
  let socketError: unknown;
  client.on('error', (error: unknown) => (socketError ??= error));
  try {
    await client.connect();
    const reply = await client.ping();
    return reply === 'PONG' ? { ok: true } : { ok: false, reason: `PING answered ${reply}`, refused: false };
  } catch (error) {
    const cause = socketError ?? error;
    return { ok: false, reason: errorMessage(cause), refused: errorCode(cause) === 'ECONNREFUSED' };
  } finally {
    client.disconnect();
  }
}

export async function ensureRedis(options: InfraOptions): Promise<Endpoint> {
  // A Sentinel group or a Redis Cluster named by REDIS_MODE and its settings (passed on to every
  // service as they are): asked through the services' own factory, never started here.
  if (options.env.REDIS_MODE !== undefined && options.env.REDIS_MODE !== '' && options.env.REDIS_MODE !== 'standalone') {
    let settings: RedisSettings;
    try {
      settings = redisSettingsFrom(options.env);
    } catch (error) {
      throw new LauncherError(errorMessage(error));
    }
    const client = createRedis(settings, { name: 'launcher', lazyConnect: true, maxRetriesPerRequest: 1, commandTimeout: 5_000 });
    client.on('error', () => undefined);
    try {
      await client.ping();
    } catch (error) {
      throw new LauncherError(`Redis (${settings.REDIS_MODE}) does not answer PING: ${errorMessage(error)}`);
    } finally {
      client.disconnect();
    }
    const where = settings.REDIS_MODE === 'cluster' ? settings.REDIS_CLUSTER_NODES! : `${settings.REDIS_SENTINEL_MASTER!}@${settings.REDIS_SENTINELS!}`;
    return { url: `redis+${settings.REDIS_MODE}://${where}`, source: 'env' };
  }
  const fromEnv = options.env.REDIS_URL;
  if (fromEnv !== undefined && fromEnv !== '') {
    const ping = await redisPing(fromEnv);
    if (!ping.ok) throw new LauncherError(`REDIS_URL (${redactUrl(fromEnv)}) does not answer PING: ${ping.reason}`);
    return { url: fromEnv, source: 'env' };
  }
  const local = options.localUrl ?? LOCAL_REDIS_URL;
  const ping = await redisPing(local);
  if (ping.ok) return { url: local, source: 'local' };
  if (!ping.refused) {
    warn(`Redis on ${new URL(local).host} answers but cannot be used (${ping.reason}); starting a private one`);
  }
  const port = options.privatePort ?? PRIVATE_REDIS_PORT;
  await startPrivateRedis(options.dataDir, port, options.cleanup);
  return { url: `redis://127.0.0.1:${port}`, source: 'private' };
}

async function pidAlive(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // Make sure the pid was not reused by something else since.
  const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => undefined);
  return cmdline === undefined || cmdline.includes('redis-server');
}

async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!(await pidAlive(pid))) return true;
    await sleep(100);
  }
  return false;
}

export interface PrivateRedisOptions {
  /** Append-only file (fsync every second), so that a stop and start keeps the data (the fault tests). */
  appendOnly?: boolean;
}

export async function startPrivateRedis(dataDir: string, port: number, cleanup: Cleanup, options: PrivateRedisOptions = {}): Promise<void> {
  const dir = path.join(dataDir, 'redis');
  const pidFile = path.join(dir, 'redis.pid');
  const logFile = path.join(dir, 'redis.log');
  await mkdir(dir, { recursive: true });
  const url = `redis://127.0.0.1:${port}`;

  if (!(await portFree(port))) {
    // A private Redis left behind by a launcher that was killed: adopt it (it holds nothing durable).
    const pid = Number((await readFile(pidFile, 'utf8').catch(() => '')).trim());
    if (pid > 0 && (await pidAlive(pid)) && (await redisPing(url)).ok) {
      log(`reusing the private Redis already running on 127.0.0.1:${port} (pid ${pid})`);
      cleanup.add('private Redis', async () => {
        log('stopping the private Redis');
        process.kill(pid, 'SIGTERM');
        if (!(await waitForExit(pid, 5000))) process.kill(pid, 'SIGKILL');
      });
      return;
    }
    throw new LauncherError(
      `port ${port} (private Redis) is in use by another program.\n  Stop it, start Redis on 6379, or set REDIS_URL.`,
    );
  }

  const redisServer = findExecutable('redis-server');
  if (redisServer === undefined) {
    throw new LauncherError(
      'No Redis answers on 127.0.0.1:6379 and redis-server was not found in PATH.\n' +
        '  Install it (Debian/Ubuntu: sudo apt-get install redis-server; macOS: brew install redis), or set REDIS_URL.',
    );
  }
  log(`starting a private Redis on 127.0.0.1:${port}`);
  const logFd = openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    // Own process group: a terminal Ctrl-C must not stop Redis before the services are down.
    child = spawn(
      redisServer,
      ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', options.appendOnly ? 'yes' : 'no',
        '--daemonize', 'no', '--pidfile', pidFile],
      { detached: true, stdio: ['ignore', logFd, logFd] },
    );
  } finally {
    closeSync(logFd);
  }
  let exited = false;
  const exit = new Promise<void>((resolve) => {
    child.once('exit', () => {
      exited = true;
      resolve();
    });
    child.once('error', () => {
      exited = true;
      resolve();
    });
  });
  cleanup.add('private Redis', async () => {
    if (exited) return;
    log('stopping the private Redis');
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exit;
    clearTimeout(timer);
  });

  const deadline = Date.now() + 15_000;
  for (;;) {
    if ((await redisPing(url)).ok) return;
    if (exited || Date.now() > deadline) {
      const serverLog = await readFile(logFile, 'utf8').catch(() => '');
      throw new LauncherError(
        exited ? 'the private Redis exited during start-up' : 'the private Redis did not answer PING within 15 s',
        lastLines(serverLog, 20),
      );
    }
    await sleep(100);
  }
}
