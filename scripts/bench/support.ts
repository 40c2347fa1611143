// Pieces the benches share: the bare Express 5 baseline, a trace sink, an HTTP client, and a process's CPU time.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request, type Agent, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createDatabase, isolatedRedis } from '../../test/support/infra.js';
import { freePort, freePorts, startSystem, type RunningSystem } from '../launcher/child.js';
import { spansOfExports, type TraceSpan } from './trace-phases.js';

/** The bare Express 5 baseline, in its own process as the gateway is (same node, no flags). */
const BARE_EXPRESS = `
import express from 'express';
const app = express();
app.get('/', (_req, res) => { res.json({ status: 'ok' }); });
const server = app.listen(0, '127.0.0.1', () => process.stdout.write('PORT ' + server.address().port + '\\n'));
process.on('SIGTERM', () => process.exit(0));
`;

export function startBareExpress(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', BARE_EXPRESS], { stdio: ['ignore', 'pipe', 'inherit'], cwd: process.cwd() });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`bare express exited with ${code}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.startsWith('PORT ')) resolve({ url: `http://127.0.0.1:${line.slice(5)}/`, child });
    });
  });
}

/**
 * The one-process baseline of a rundown read: Express 5 and pg (a pool of 10, as the rundown service
 * has) in one process, `GET /rundowns/:id` reading the same `rundown.rundowns` row of the same database,
 * no auth, no hop: what a monolith pays for the read. Its own process, as the gateway is.
 */
const BARE_EXPRESS_PG = `
import express from 'express';
import pg from 'pg';
const pool = new pg.Pool({ connectionString: process.env.BASELINE_DATABASE_URL, max: 10 });
const app = express();
app.get('/rundowns/:id', async (req, res, next) => {
  try {
    const { rows } = await pool.query(
      'SELECT id, team_id, title, timezone, start_time, status, settings, cue_tree, column_ids, playable_duration_ms, created_at, updated_at FROM rundown.rundowns WHERE id = $1 AND deleted_at IS NULL',
      [req.params.id],
    );
    if (rows.length === 0) res.status(404).json({ error: 'not found' });
    else res.json({ data: rows[0] });
  } catch (error) {
    next(error);
  }
});
const server = app.listen(0, '127.0.0.1', () => process.stdout.write('PORT ' + server.address().port + '\\n'));
process.on('SIGTERM', () => pool.end().finally(() => process.exit(0)));
`;

export function startBareExpressPg(databaseUrl: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', BARE_EXPRESS_PG], {
    stdio: ['ignore', 'pipe', 'inherit'],
    cwd: process.cwd(),
    env: { ...process.env, BASELINE_DATABASE_URL: databaseUrl },
  });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`bare express + pg exited with ${code}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.startsWith('PORT ')) resolve({ url: `http://127.0.0.1:${line.slice(5)}`, child });
    });
  });
}

/**
 * Accepts OTLP/HTTP exports and drops them, as a collector would (answers `{}` with 200); counts the
 * bytes received. With `keep`, it also keeps the trace exports' bodies, unparsed (parsing them
 * while a bench measures would put the sink's CPU into its figures): `spans()` reads them.
 */
export async function startTraceSink(
  options: { keep?: boolean } = {},
): Promise<{ url: string; server: Server; received: () => number; spans: () => TraceSpan[] }> {
  let received = 0;
  const kept: Buffer[][] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    if (options.keep && req.url === '/v1/traces') kept.push(chunks);
    req.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (options.keep) chunks.push(chunk);
    });
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    received: () => received,
    spans: () => spansOfExports(kept.map((chunks) => Buffer.concat(chunks).toString('utf8'))),
  };
}

/**
 * One request through `agent` (keep-alive), its answer read and dropped: its status code. The benches'
 * client for latency series: node:http rather than fetch, whose (undici's) own CPU per request was a
 * visible share of a short read on this 2-core machine, client and services sharing it.
 */
export function statusOf(url: URL | string, headers: Record<string, string>, agent: Agent, method = 'GET'): Promise<number> {
  return new Promise((ok, fail) => {
    const req = request(url, { agent, headers, method }, (res) => {
      res.resume();
      res.on('end', () => ok(res.statusCode ?? 0));
    });
    req.on('error', fail);
    req.end();
  });
}

const CLOCK_TICKS = 100; // USER_HZ, 100 on Linux

/**
 * CPU time a process has used (user + system, ms), from /proc; NaN when it cannot be read. On a
 * shared machine, a process's CPU per request holds still where throughput follows the neighbours' load.
 */
export function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return Number.NaN;
  }
}

/**
 * The bare push baseline, in its own process: plain Node HTTP serving SSE at `/events` and Socket.IO
 * (WebSocket) at `/socket.io`; `POST /emit` writes its body to every SSE stream as a `status` frame and
 * emits it to every socket as `timesnap`, then answers; `POST /emit-v0` emits its body's `currentCue`,
 * `nextCue` and `timesnap` to every socket, in that order (what one v0 change sends). What fan-out costs
 * with nothing else in the way. With `coalesce`, its connections write as the realtime service's do (write-coalescing.ts).
 */
const BARE_PUSH = `
import { createServer } from 'node:http';
import { Server } from 'socket.io';
const streams = new Set();
const server = createServer((req, res) => {
  if (req.url === '/events') {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.write('event:status\\ndata:{"revision":0}\\n\\n');
    streams.add(res);
    req.on('close', () => streams.delete(res));
    return;
  }
  if (req.method === 'POST' && req.url === '/emit-v0') {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const change = JSON.parse(body);
      for (const event of ['currentCue', 'nextCue', 'timesnap']) io.emit(event, change[event]);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
    return;
  }
  if (req.method === 'POST' && req.url === '/emit') {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const frame = 'event:status\\ndata:' + body + '\\n\\n';
      for (const s of streams) s.write(frame);
      io.emit('timesnap', JSON.parse(body));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    });
    return;
  }
  res.writeHead(404);
  res.end();
});
const io = new Server(server, { transports: ['websocket'] });
if (process.env.BARE_COALESCE === '1') {
  // The realtime service's one write per connection per tick (Engine.IO's private flush): what it gains.
  const { coalesceWrites } = await import('./src/write-coalescing.ts');
  io.engine.on('connection', coalesceWrites);
}
io.on('connection', (socket) => socket.emit('serverTime', new Date().toISOString()));
server.listen(0, '127.0.0.1', () => process.stdout.write('PORT ' + server.address().port + '\\n'));
process.on('SIGTERM', () => process.exit(0));
`;

export function startBarePush(options: { coalesce?: boolean } = {}): Promise<{ url: string; child: ChildProcess }> {
  // Run from the realtime workspace so that `socket.io` resolves as the service resolves it.
  const child = spawn(process.execPath, [...(options.coalesce ? ['--import', 'tsx'] : []), '--input-type=module', '-e', BARE_PUSH], {
    stdio: ['ignore', 'pipe', 'inherit'],
    cwd: `${import.meta.dirname}/../../services/realtime`,
    env: { ...process.env, BARE_COALESCE: options.coalesce ? '1' : '0' },
  });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`bare push server exited with ${code}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.startsWith('PORT ')) resolve({ url: `http://127.0.0.1:${line.slice(5)}`, child });
    });
  });
}

/** The launcher's service processes by name (`gateway`, `auth`, `rundown`, ...), from /proc's child lists. */
export function servicePids(launcherPid: number): Map<string, number> {
  const found = new Map<string, number>();
  const visit = (pid: number) => {
    let children: number[] = [];
    try {
      children = readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
        readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ').filter(Boolean).map(Number),
      );
    } catch {
      return;
    }
    for (const child of children) {
      let cmd = '';
      try {
        cmd = readFileSync(`/proc/${child}/cmdline`, 'utf8');
      } catch {
        continue;
      }
      const name = /services\/([^/]+)\/(?:dist|src)\/main\./.exec(cmd)?.[1];
      if (name) found.set(name, child);
      visit(child);
    }
  };
  visit(launcherPid);
  return found;
}

/** Resident memory (KB) and open file descriptors of a process, from /proc; NaN when it is gone. */
export function processFootprint(pid: number): { rssKb: number; fds: number } {
  try {
    const rssKb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? Number.NaN);
    return { rssKb, fds: readdirSync(`/proc/${pid}/fd`).length };
  } catch {
    return { rssKb: Number.NaN, fds: Number.NaN };
  }
}

export type Cleanup = () => Promise<unknown> | unknown;

/**
 * The whole system as production runs it (compiled JavaScript, traces sampled at the deployed default
 * and exported to a local OTLP sink; `telemetry: 'off'` disables the SDK for a comparison run), started through the launcher on
 * free ports with a throw-away database (`name`) and the Redis db BENCH_REDIS_DB (else `redisDb`);
 * each teardown is pushed onto `cleanups`, to run in reverse. `telemetry` is the environment it ran
 * with, for the extra processes a bench starts beside it.
 */
export async function startBenchSystem(
  name: string,
  redisDb: number,
  cleanups: Cleanup[],
  options: { env?: Record<string, string>; verbose?: boolean; telemetry?: 'on' | 'off' } = {},
): Promise<{ system: RunningSystem; telemetry: Record<string, string> }> {
  const sink = await startTraceSink();
  cleanups.push(() => new Promise((r) => sink.server.close(r)));
  const database = await createDatabase(process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres', name);
  cleanups.push(() => database.drop());
  const redisUrl = await isolatedRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', Number(process.env.BENCH_REDIS_DB ?? redisDb));
  const dataDir = mkdtempSync(join(tmpdir(), `${name}-`));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const telemetry: Record<string, string> =
    options.telemetry === 'off'
      ? { OTEL_SDK_DISABLED: 'true' }
      : { OTEL_SDK_DISABLED: 'false', OTEL_EXPORTER_OTLP_ENDPOINT: sink.url };
  const system = await startSystem({
    env: {
      ...(await freePorts()),
      DATA_DIR: dataDir,
      DATABASE_URL: database.url,
      REDIS_URL: redisUrl,
      LOG_LEVEL: 'warn',
      LAUNCH_MODE: 'compiled',
      ...telemetry,
      ...options.env,
    },
    ...(options.verbose ? { verbose: true } : {}),
  });
  cleanups.push(() => system.stop());
  return { system, telemetry };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- benches read a few known fields of loosely typed answers
export type Loose = any;

/** One API call that must answer `expect`: its envelope's `data` (the benches' set-up requests). */
export async function must(url: string, method: string, token: string, body?: unknown, expect = 200): Promise<Loose> {
  const res = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== expect) throw new Error(`${method} ${url}: ${res.status} ${text.slice(0, 500)}`);
  return text ? (JSON.parse(text) as { data: unknown }).data : undefined;
}
