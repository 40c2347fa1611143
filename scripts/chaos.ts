// `npm run chaos`: fault tests under a steady mixed load (issue 13, item 2).
//
// Starts a PRIVATE PostgreSQL and Redis (from the machine's binaries, in .data/chaos, on their own
// ports: never the shared servers, which this script never touches) and the whole system through the
// launcher (compiled services, supervised: a killed service is restarted by the launcher itself).
// Then, during a steady load of
//   - content writes: cue creates (a unique marker in the title) and cell writes (the marker as content),
//     each with an Idempotency-Key, retried with the same key until acknowledged,
//   - runner actions (next / previous with Idempotency-Keys) on a few rundowns,
//   - timed shows: new rundowns with short auto-advance cues, started one after another, so that
//     deadlines fall due during every outage,
//   - SSE clients that reconnect with Last-Event-ID, and Socket.IO v0 clients that reconnect,
// it injects, in turn: kill -9 of every service (the launcher restarts it), Redis stopped and
// started, PostgreSQL restarted (immediate stop, as a crash). Afterwards it verifies:
//   - every acknowledged write is stored (lost = 0) and no write is stored twice (duplicated = 0),
//   - runner state intact: every timed show ended with exactly one status per revision (each
//     deadline fired once, late but once), action revisions grew with every acknowledged action, and
//     the status served equals the one stored in PostgreSQL,
//   - SSE clients missed nothing (every acknowledged cue reached them; status revisions without gaps;
//     no resync demanded on a Last-Event-ID reconnect), v0 clients are connected and follow the show,
//   - every error answer was problem+json with `service_unavailable` (5xx) or
//     `auth.revocation_check_unavailable` (401), and no request hung past the route's deadline.
// Prints the counts per fault and in total; exits 1 on any violation.
//
// options: --steady-seconds 8 (load between faults) --faults all|gateway,auth,...,redis,postgres
//          --pg-port 61600 --redis-port 61601 (above the ephemeral range, where free ports of tests never land)
//          --outage-seconds 3 --verbose
// Traffic goes to 127.0.0.1 only; every loop stops by itself (time- and count-bounded).
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createParser } from 'eventsource-parser';
import { Redis } from 'ioredis';
import pg from 'pg';
import { io, type Socket } from 'socket.io-client';
import { readRundownEvents } from '@rundown/shared';
import { createDatabase } from '../test/support/infra.js';
import { pidListeningOn } from '../test/support/processes.js';
import { freePorts, startSystem, type LauncherReady, type RunningSystem } from './launcher/child.js';
import { grpcHealth, httpReady } from './launcher/health.js';
import { redisPing, startPrivatePostgres, startPrivateRedis, stopPrivatePostgres } from './launcher/infra.js';
import { Cleanup, REPO_ROOT, sleep } from './launcher/util.js';

const { values } = parseArgs({
  options: {
    'steady-seconds': { type: 'string', default: '8' },
    'outage-seconds': { type: 'string', default: '3' },
    faults: { type: 'string', default: 'all' },
    'pg-port': { type: 'string', default: process.env.CHAOS_PG_PORT ?? '61600' },
    'redis-port': { type: 'string', default: process.env.CHAOS_REDIS_PORT ?? '61601' },
    verbose: { type: 'boolean', default: false },
  },
  strict: true,
});
const STEADY_MS = Number(values['steady-seconds']) * 1000;
const OUTAGE_MS = Number(values['outage-seconds']) * 1000;
const PG_PORT = Number(values['pg-port']);
const REDIS_PORT = Number(values['redis-port']);
const VERBOSE = values.verbose;
const SERVICE_FAULTS = ['gateway', 'auth', 'rundown', 'cells', 'runner', 'realtime'];
const ALL_FAULTS = [...SERVICE_FAULTS, 'redis', 'postgres'];
const FAULTS = values.faults === 'all' ? ALL_FAULTS : values.faults.split(',').map((f) => f.trim());
for (const f of FAULTS) if (!ALL_FAULTS.includes(f)) throw new Error(`unknown fault ${f}; known: ${ALL_FAULTS.join(', ')}`);

/** The gateway's gRPC deadline is 5 s; an answer later than this (plus scheduling slack) is a hang. */
const ROUTE_DEADLINE_MS = 5_000;
const HANG_MS = ROUTE_DEADLINE_MS + 5_000;
/** A write not acknowledged after this long is given up (it counts as unacknowledged, never as lost). */
const GIVE_UP_MS = 90_000;
/** Hard cap on the whole run. */
const RUN_CAP_MS = 30 * 60_000;
const RUN = Date.now().toString(36);
const ALLOWED_ERRORS = new Set(['service_unavailable', 'auth.revocation_check_unavailable']);

const violations: string[] = [];
const violate = (what: string): void => {
  violations.push(what);
  if (VERBOSE) console.log(`VIOLATION ${what}`);
};
const note = (what: string): void => console.log(`[chaos ${new Date().toISOString().slice(11, 23)}] ${what}`);

// ---------------------------------------------------------------- HTTP with accounting

type Outcome = 'ok' | 'client_error' | 'problem' | 'network' | 'bad' | 'hang';
interface Sample {
  route: string;
  start: number;
  end: number;
  status: number;
  outcome: Outcome;
  code?: string;
}
const samples: Sample[] = [];

interface Answer {
  status: number;
  body: { data?: Record<string, unknown> & { id?: string; revision?: number; items?: unknown[] }; code?: string } | undefined;
  outcome: Outcome;
}

let base = '';
let adminBase = '';
let adminSecret = '';

/** One request; its outcome is recorded under `route` (a route class, for the unavailability spans). */
async function request(route: string, method: string, url: string, options: { token?: string; body?: unknown; key?: string } = {}): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.key) headers['idempotency-key'] = options.key;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const start = Date.now();
  let status = 0;
  let outcome: Outcome;
  let parsed: Answer['body'];
  let code: string | undefined;
  try {
    const res = await fetch(url, {
      method,
      headers,
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
      signal: AbortSignal.timeout(HANG_MS),
    });
    status = res.status;
    const text = await res.text();
    try {
      parsed = text ? (JSON.parse(text) as Answer['body']) : undefined;
    } catch {
      parsed = undefined;
    }
    if (status < 400) outcome = 'ok';
    else {
      const problem = /^application\/problem\+json/.test(res.headers.get('content-type') ?? '') && typeof parsed?.code === 'string';
      code = parsed?.code;
      if (problem && status < 500 && !ALLOWED_ERRORS.has(code ?? '')) outcome = 'client_error';
      else if (problem && ALLOWED_ERRORS.has(code ?? '') && (status >= 500 || code === 'auth.revocation_check_unavailable')) outcome = 'problem';
      else {
        outcome = 'bad';
        violate(`${method} ${route}: ${status} ${res.headers.get('content-type') ?? ''} ${text.slice(0, 300)}`);
      }
    }
  } catch (error) {
    const name = (error as Error).name;
    if (name === 'TimeoutError' || name === 'AbortError') {
      outcome = 'hang';
      violate(`${method} ${route}: no answer within ${HANG_MS} ms`);
    } else outcome = 'network'; // connection refused or reset: the process behind it is gone
  }
  samples.push({ route, start, end: Date.now(), status, outcome, ...(code ? { code } : {}) });
  return { status, body: parsed, outcome };
}

/** What a client retries with the same key (interface spec: 5xx, revocation check unavailable, a request still in flight). */
const retryable = (a: Answer): boolean =>
  a.outcome === 'problem' || a.outcome === 'network' || a.status >= 500 || (a.status === 409 && a.body?.code === 'idempotency.in_flight');

let stopLoad = false;
/** Live clients stop after the load, once the last events had time to arrive. */
let stopLive = false;

/** Sends the same request (same key) until it is acknowledged or refused for good; undefined when given up. */
async function untilAcknowledged(route: string, method: string, url: string, options: { token: string; body?: unknown; key: string }): Promise<Answer | undefined> {
  const first = Date.now();
  let pause = 100;
  for (;;) {
    const answer = await request(route, method, url, options);
    if (!retryable(answer)) return answer;
    if (Date.now() - first > GIVE_UP_MS) return undefined;
    await sleep(pause);
    pause = Math.min(1000, pause * 2);
  }
}

// ---------------------------------------------------------------- load: content writes

interface WriteRecord {
  marker: string;
  rundownId: string;
  acknowledged: boolean;
  cueId?: string;
  cellAcknowledged?: boolean;
}
const writes: WriteRecord[] = [];

async function writer(token: string, rundownId: string, columnId: string, index: number): Promise<void> {
  for (let n = 0; !stopLoad && n < 100_000; n++) {
    const marker = `chaos-${RUN}-w${index}-${n}`;
    const record: WriteRecord = { marker, rundownId, acknowledged: false };
    writes.push(record);
    const created = await untilAcknowledged('cue create', 'POST', `${base}/rundowns/${rundownId}/cues`, {
      token,
      key: randomUUID(),
      body: { title: marker, duration_ms: 1000 },
    });
    if (created === undefined) continue;
    if (created.status !== 201) {
      violate(`cue create ${marker}: ${created.status} ${JSON.stringify(created.body)}`);
      continue;
    }
    record.acknowledged = true;
    record.cueId = created.body?.data?.id;
    const cell = await untilAcknowledged('cell write', 'PATCH', `${base}/rundowns/${rundownId}/cells`, {
      token,
      key: randomUUID(),
      body: { cue_id: record.cueId, column_id: columnId, content: marker },
    });
    if (cell?.status === 200) record.cellAcknowledged = true;
    else if (cell !== undefined) violate(`cell write ${marker}: ${cell.status} ${JSON.stringify(cell.body)}`);
    await sleep(50);
  }
}

// ---------------------------------------------------------------- load: runner actions

interface ActionLog {
  rundownId: string;
  /** Revisions of acknowledged actions, in the order they were acknowledged (one actor per rundown). */
  acked: number[];
  activeCueId?: string;
}

async function actor(token: string, log: ActionLog): Promise<void> {
  let forward = true;
  for (let n = 0; !stopLoad && n < 100_000; n++) {
    const verb = forward ? 'next' : 'previous';
    const answer = await untilAcknowledged(`action`, 'POST', `${base}/rundowns/${log.rundownId}/action:${verb}`, { token, key: randomUUID() });
    if (answer === undefined) continue;
    if (answer.status === 200) {
      log.acked.push(Number(answer.body?.data?.revision));
      log.activeCueId = (answer.body?.data?.active_cue as { id?: string } | null)?.id;
    } else if (answer.body?.code === 'runner.no_next_cue' || answer.body?.code === 'runner.no_previous_cue') forward = !forward;
    else violate(`action ${verb}: ${answer.status} ${JSON.stringify(answer.body)}`);
    await sleep(150);
  }
}

// ---------------------------------------------------------------- load: timed shows

const TIMED_CUES = 3;
const TIMED_CUE_MS = 1500;
interface TimedShow {
  rundownId: string;
  startedAt: number;
}
const timedShows: TimedShow[] = [];

async function showMaker(token: string, caller: string): Promise<void> {
  for (let n = 0; !stopLoad && n < 10_000; n++) {
    const created = await untilAcknowledged('rundown create', 'POST', `${base}/rundowns`, {
      token,
      key: randomUUID(),
      body: {
        title: `chaos-${RUN}-show-${n}`,
        cues: Array.from({ length: TIMED_CUES }, (_, i) => ({ title: `T${i}`, duration_ms: TIMED_CUE_MS, auto_advance: true })),
      },
    });
    if (created?.status !== 201 || !created.body?.data?.id) {
      if (created !== undefined) violate(`rundown create: ${created.status} ${JSON.stringify(created.body)}`);
      continue;
    }
    const rundownId = created.body.data.id;
    const startedAt = Date.now();
    const started = await untilAcknowledged('action', 'POST', `${base}/rundowns/${rundownId}/action:start`, { token: caller, key: randomUUID() });
    if (started?.status === 200) timedShows.push({ rundownId, startedAt });
    else if (started !== undefined) violate(`start of a timed show: ${started.status} ${JSON.stringify(started.body)}`);
    await sleep(1200);
  }
}

// ---------------------------------------------------------------- live clients: SSE

interface SseFollower {
  rundownId: string;
  cueIds: Set<string>;
  revisions: Set<number>;
  reconnects: number;
  /** Streams opened again with Last-Event-ID and accepted. */
  resumed: number;
  resyncs: number;
  refusals: number;
  lastId: string | undefined;
  done: Promise<void>;
}

function followSse(token: string, rundownId: string): SseFollower {
  const follower: SseFollower = { rundownId, cueIds: new Set(), revisions: new Set(), reconnects: -1, resumed: 0, resyncs: 0, refusals: 0, lastId: undefined, done: Promise.resolve() };
  follower.done = (async () => {
    while (!stopLive) {
      follower.reconnects++;
      const abort = new AbortController();
      const stopper = setInterval(() => stopLive && abort.abort(), 200);
      const resuming = follower.lastId !== undefined;
      try {
        const headers: Record<string, string> = { accept: 'text/event-stream', authorization: `Bearer ${token}` };
        if (follower.lastId !== undefined) headers['last-event-id'] = follower.lastId;
        const start = Date.now();
        const res = await fetch(`${base}/rundowns/${rundownId}/events?events=cue`, { headers, signal: abort.signal });
        if (res.status !== 200) {
          const text = await res.text();
          let code: string | undefined;
          try {
            code = (JSON.parse(text) as { code?: string }).code;
          } catch {
            code = undefined;
          }
          const problem = /^application\/problem\+json/.test(res.headers.get('content-type') ?? '') && ALLOWED_ERRORS.has(code ?? '');
          samples.push({ route: 'sse open', start, end: Date.now(), status: res.status, outcome: problem ? 'problem' : 'bad', ...(code ? { code } : {}) });
          if (!problem) violate(`SSE open: ${res.status} ${text.slice(0, 300)}`);
          follower.refusals++;
        } else {
          samples.push({ route: 'sse open', start, end: Date.now(), status: 200, outcome: 'ok' });
          if (resuming) follower.resumed++;
          const parser = createParser({
            onEvent: (m) => {
              if (m.id !== undefined) follower.lastId = m.id;
              const data = JSON.parse(m.data) as { change?: string; id?: string; revision?: number; resync?: boolean };
              if (m.event === 'ready' && data.resync && resuming) {
                follower.resyncs++;
                violate(`SSE ${rundownId}: resync demanded on a Last-Event-ID reconnect (${headers['last-event-id']})`);
              }
              if (m.event === 'cue' && data.change === 'created' && data.id) follower.cueIds.add(data.id);
              if (m.event === 'status' && typeof data.revision === 'number') follower.revisions.add(data.revision);
            },
          });
          const decoder = new TextDecoder();
          for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
        }
      } catch {
        // cut (a gateway killed) or aborted at the end: reconnect below
      } finally {
        clearInterval(stopper);
      }
      if (!stopLive) await sleep(250);
    }
  })();
  return follower;
}

// ---------------------------------------------------------------- live clients: Socket.IO v0

/** Spans during which a v0 client was disconnected (from the drop to its next connect). */
const v0Outages: { start: number; end: number }[] = [];

interface V0Follower {
  rundownId: string;
  socket: Socket;
  connects: number;
  timesnaps: { cueId: string | null; at: number }[];
}

function followV0(publicUrl: string, v0Token: string, rundownId: string, websocketOnly: boolean): V0Follower {
  const socket = io(publicUrl, {
    path: '/api-v0/socket.io',
    auth: { rundownId, apiToken: v0Token },
    transports: websocketOnly ? ['websocket'] : ['polling', 'websocket'],
    reconnection: true,
    reconnectionDelay: 200,
    reconnectionDelayMax: 1000,
    forceNew: true,
  });
  const follower: V0Follower = { rundownId, socket, connects: 0, timesnaps: [] };
  let droppedAt: number | undefined;
  socket.on('connect', () => {
    follower.connects++;
    if (droppedAt !== undefined) v0Outages.push({ start: droppedAt, end: Date.now() });
    droppedAt = undefined;
  });
  socket.on('disconnect', () => (droppedAt = Date.now()));
  socket.on('timesnap', (payload: { cueId?: string | null }) => follower.timesnaps.push({ cueId: payload?.cueId ?? null, at: Date.now() }));
  // A refused connect during an outage does not retry on its own: ask again.
  socket.on('connect_error', () => {
    if (!stopLive) setTimeout(() => !socket.connected && !stopLive && socket.connect(), 500);
  });
  return follower;
}

// ---------------------------------------------------------------- faults

interface FaultResult {
  name: string;
  start: number;
  /** When the killed or stopped component answered again. */
  restoredMs: number;
  /** When every route class had succeeded again after the fault. */
  end: number;
  longestMs: number;
  longestRoute: string;
}

async function until(what: string, probe: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

function serviceProbe(ready: LauncherReady, name: string): () => Promise<boolean> {
  if (name === 'gateway') return async () => (await httpReady(`${ready.public_url}/readyz`)) === undefined;
  const port = ready.grpc_ports[name];
  if (port === undefined) throw new Error(`no gRPC port for ${name}`);
  return async () => (await grpcHealth(`127.0.0.1:${port}`)) === undefined;
}

function servicePid(ready: LauncherReady, name: string): number {
  return pidListeningOn(name === 'gateway' ? ready.http_port : ready.grpc_ports[name]!);
}

const ROUTES = ['cue create', 'cell write', 'action', 'rundown create'];

/** After a fault: waits until every route class has succeeded again, so its span is complete. */
async function recovered(since: number): Promise<void> {
  await until(
    'every route to succeed again',
    async () => ROUTES.every((route) => samples.some((s) => s.route === route && s.start >= since && s.outcome === 'ok')),
    120_000,
  );
}

/** Longest span, per route class, from a failed request to the end of the next successful one. */
function longestUnavailability(from: number, to: number): { ms: number; route: string } {
  let best = { ms: 0, route: '-' };
  for (const route of [...ROUTES, 'sse open']) {
    const rows = samples.filter((s) => s.route === route && s.start >= from - 2000 && s.start <= to).sort((a, b) => a.start - b.start);
    let failedSince: number | undefined;
    for (const s of rows) {
      const ok = s.outcome === 'ok' || s.outcome === 'client_error';
      if (!ok) failedSince ??= s.start;
      else if (failedSince !== undefined) {
        if (s.end - failedSince > best.ms) best = { ms: s.end - failedSince, route };
        failedSince = undefined;
      }
    }
  }
  for (const o of v0Outages) {
    if (o.start >= from - 2000 && o.start <= to && o.end - o.start > best.ms) best = { ms: o.end - o.start, route: 'v0 socket' };
  }
  return best;
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const hardStop = setTimeout(() => {
    console.error(`chaos: still running after ${RUN_CAP_MS / 60_000} min; giving up`);
    process.exit(2);
  }, RUN_CAP_MS);
  hardStop.unref();

  const cleanup = new Cleanup();
  const dataDir = path.join(REPO_ROOT, '.data', 'chaos');
  mkdirSync(dataDir, { recursive: true });
  let system: RunningSystem | undefined;
  const stopAll = async () => {
    stopLoad = true;
    stopLive = true;
    await system?.stop();
    await cleanup.run();
  };
  process.once('SIGINT', () => void stopAll().then(() => process.exit(130)));

  try {
    // 1. Private servers this run may kill (never the shared ones on 5432/6379).
    note(`private PostgreSQL on 127.0.0.1:${PG_PORT} and Redis on 127.0.0.1:${REDIS_PORT} in ${dataDir}`);
    await startPrivatePostgres(dataDir, PG_PORT, cleanup);
    const redisCleanup = new Cleanup();
    cleanup.add('private Redis', () => redisCleanup.run());
    await startPrivateRedis(dataDir, REDIS_PORT, redisCleanup, { appendOnly: true });
    const redisUrl = `redis://127.0.0.1:${REDIS_PORT}/0`;
    const flush = new Redis(redisUrl);
    await flush.flushdb(); // the private server holds nothing else
    flush.disconnect();
    const database = await createDatabase(`postgres://postgres@127.0.0.1:${PG_PORT}/postgres`, 'chaos');

    // 2. The system, through the launcher (compiled, supervised).
    system = await startSystem({
      env: { ...(await freePorts()), DATABASE_URL: database.url, REDIS_URL: redisUrl, DATA_DIR: path.join(dataDir, 'launcher'), LOG_LEVEL: 'warn' },
      verbose: VERBOSE,
      timeoutMs: 600_000, // a first run builds every service, on a shared machine
    });
    const ready = system.ready;
    base = ready.base_url;
    adminBase = ready.admin_url;
    adminSecret = ready.admin_secret;
    note(`system ready in ${system.startupMs} ms (launcher pid ${ready.pid})`);

    // 3. A team, its tokens, the rundowns the load works on.
    const admin = async (method: string, p: string, body?: unknown) => {
      const res = await fetch(`${adminBase}${p}`, {
        method,
        headers: { authorization: `Bearer ${adminSecret}`, 'content-type': 'application/json' },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      if (res.status >= 300) throw new Error(`admin ${method} ${p}: ${res.status} ${await res.text()}`);
      return ((await res.json()) as { data: Record<string, string> }).data;
    };
    const team = await admin('POST', '/teams', { name: `chaos-${RUN}`, plan: 'paid', rate_limit_per_minute: 1_000_000, max_rundowns: 100_000 });
    const owner = (await admin('POST', `/teams/${team.id}/tokens`, { role: 'OWNER' })).token!;
    const caller = (await admin('POST', `/teams/${team.id}/tokens`, { role: 'SHOWCALL' })).token!;
    const v0Token = (await admin('POST', `/teams/${team.id}/v0-token`)).token!;
    const setup = async (body: unknown) => {
      const res = await request('setup', 'POST', `${base}/rundowns`, { token: owner, body });
      if (res.status !== 201) throw new Error(`rundown create failed: ${res.status} ${JSON.stringify(res.body)}`);
      const id = res.body!.data!.id!;
      const columns = await request('setup', 'GET', `${base}/rundowns/${id}/columns`, { token: owner });
      return { id, columnId: (columns.body?.data?.items?.[0] as { id?: string } | undefined)?.id };
    };
    const writeRundowns = await Promise.all([0, 1, 2].map((i) => setup({ title: `chaos-${RUN}-writes-${i}`, columns: [{ name: 'Script' }] })));
    const actionRundowns = await Promise.all(
      [0, 1].map((i) => setup({ title: `chaos-${RUN}-actions-${i}`, cues: ['A', 'B', 'C', 'D'].map((t) => ({ title: t, duration_ms: 600_000 })) })),
    );
    for (const r of actionRundowns) {
      const started = await request('setup', 'POST', `${base}/rundowns/${r.id}/action:start`, { token: caller });
      if (started.status !== 200) throw new Error(`start failed: ${started.status}`);
    }

    // 4. Load and live clients.
    const sse = [...writeRundowns, ...actionRundowns].map((r) => followSse(caller, r.id));
    const v0 = actionRundowns.flatMap((r) => [followV0(ready.public_url, v0Token, r.id, false), followV0(ready.public_url, v0Token, r.id, true)]);
    const actionLogs: ActionLog[] = actionRundowns.map((r) => ({ rundownId: r.id, acked: [] }));
    const loops = [
      ...writeRundowns.map((r, i) => writer(owner, r.id, r.columnId!, i)),
      ...actionLogs.map((log) => actor(caller, log)),
      showMaker(owner, caller),
    ];
    note(`load running: ${writeRundowns.length} writers, ${actionLogs.length} actors, timed shows, ${sse.length} SSE and ${v0.length} Socket.IO clients`);
    await sleep(STEADY_MS);

    // 5. Faults, one after another, each followed by steady load.
    const results: FaultResult[] = [];
    // A restarted Redis is a new process to stop at the end; a restarted PostgreSQL is stopped by
    // the first start's cleanup (same data folder), so its own is not kept.
    const restartCleanup = new Cleanup();
    cleanup.add('restarted Redis', () => restartCleanup.run());
    for (const fault of FAULTS) {
      const start = Date.now();
      let restoredAt: number;
      if (SERVICE_FAULTS.includes(fault)) {
        const pid = servicePid(ready, fault);
        note(`kill -9 ${fault} (pid ${pid})`);
        process.kill(pid, 'SIGKILL');
        await until(`${fault} to be restarted by the launcher`, async () => {
          try {
            if (servicePid(ready, fault) === pid) return false;
          } catch {
            return false;
          }
          return serviceProbe(ready, fault)();
        }, 60_000);
        restoredAt = Date.now();
      } else if (fault === 'redis') {
        const pid = Number(readFileSync(path.join(dataDir, 'redis', 'redis.pid'), 'utf8').trim());
        note(`stop Redis (SIGTERM, pid ${pid}) for ${OUTAGE_MS} ms`);
        process.kill(pid, 'SIGTERM');
        await until('Redis to exit', async () => !(await redisPing(redisUrl)).ok, 30_000);
        await sleep(OUTAGE_MS);
        await startPrivateRedis(dataDir, REDIS_PORT, restartCleanup, { appendOnly: true });
        restoredAt = Date.now();
        note('Redis started again');
      } else {
        note(`restart PostgreSQL (immediate stop, ${OUTAGE_MS} ms down)`);
        await stopPrivatePostgres(dataDir, 'immediate');
        await sleep(OUTAGE_MS);
        await startPrivatePostgres(dataDir, PG_PORT, new Cleanup());
        restoredAt = Date.now();
        note('PostgreSQL started again');
      }
      await recovered(restoredAt);
      const end = Date.now();
      const longest = longestUnavailability(start, end);
      results.push({ name: fault, start, restoredMs: restoredAt - start, end, longestMs: longest.ms, longestRoute: longest.route });
      note(`${fault}: back after ${restoredAt - start} ms; every route answering again after ${end - start} ms (longest unavailability ${longest.ms} ms on ${longest.route})`);
      if (system.exitCode() !== null) throw new Error(`the launcher exited (${system.exitCode()}) after the ${fault} fault`);
      await sleep(STEADY_MS);
    }

    // 6. Stop the load, let the shows run out, then verify.
    stopLoad = true;
    note('stopping the load');
    await Promise.all(loops);
    const lastShowStart = Math.max(0, ...timedShows.map((s) => s.startedAt));
    await sleep(Math.max(3000, lastShowStart + TIMED_CUES * TIMED_CUE_MS + 3000 - Date.now()));
    stopLive = true;
    await Promise.all(sse.map((f) => f.done));

    const verification = await verify({ databaseUrl: database.url, redisUrl, caller, actionLogs, sse, v0 });
    for (const f of v0) f.socket.close();
    printReport(results, verification);
    await stopAll();
    await database.drop().catch(() => undefined);
    // The restarted PostgreSQL is stopped by now; the database went with the run's server anyway.
  } catch (error) {
    console.error(error instanceof Error ? error.stack : error);
    violate(`run failed: ${(error as Error).message}`);
    await stopAll();
  }
  clearTimeout(hardStop);
  if (violations.length > 0) {
    console.log(`\nFAILED: ${violations.length} violation(s)`);
    for (const v of violations.slice(0, 40)) console.log(`  - ${v.slice(0, 400)}`);
    if (violations.length > 40) console.log(`  ... and ${violations.length - 40} more`);
    process.exit(1);
  }
  console.log('\nPASSED: no write lost or duplicated, runner and live clients whole, every error a problem+json in time');
  process.exit(0);
}

interface Verification {
  acknowledged: number;
  unacknowledged: number;
  lost: number;
  duplicated: number;
  cellsAcked: number;
  cellsLost: number;
  timedShows: number;
  deadlines: number;
  maxLateMs: number;
  actionsAcked: number;
  sseClients: number;
  sseReconnects: number;
  sseResumed: number;
  v0Connects: number;
}

async function verify(ctx: {
  databaseUrl: string;
  redisUrl: string;
  caller: string;
  actionLogs: ActionLog[];
  sse: SseFollower[];
  v0: V0Follower[];
}): Promise<Verification> {
  const db = new pg.Client({ connectionString: ctx.databaseUrl });
  await db.connect();
  const redis = new Redis(ctx.redisUrl);
  try {
    // Writes: each marker stored once if acknowledged, at most once otherwise.
    const cues = await db.query<{ title: string; n: number }>("SELECT title, count(*)::int AS n FROM rundown.cues WHERE title LIKE $1 GROUP BY title", [`chaos-${RUN}-w%`]);
    const stored = new Map(cues.rows.map((r) => [r.title, r.n]));
    const cells = await db.query<{ content: string }>('SELECT content FROM cells.cells WHERE content LIKE $1', [`chaos-${RUN}-w%`]);
    const cellContent = new Set(cells.rows.map((r) => r.content));
    let lost = 0;
    let duplicated = 0;
    let cellsLost = 0;
    for (const w of writes) {
      const n = stored.get(w.marker) ?? 0;
      if (n > 1) {
        duplicated++;
        violate(`write ${w.marker} stored ${n} times`);
      }
      if (w.acknowledged && n === 0) {
        lost++;
        violate(`acknowledged write ${w.marker} is not stored`);
      }
      if (w.cellAcknowledged && !cellContent.has(w.marker)) {
        cellsLost++;
        violate(`acknowledged cell write ${w.marker} is not stored`);
      }
    }

    // Timed shows: ended, one status per revision 1..N+1 (each deadline fired once).
    let deadlines = 0;
    let maxLateMs = 0;
    for (const show of timedShows) {
      const status = await request('verify', 'GET', `${base}/rundowns/${show.rundownId}/status`, { token: ctx.caller });
      const data = status.body?.data as { phase?: string; revision?: number } | undefined;
      const expected = TIMED_CUES + 1;
      if (data?.phase !== 'ended' || data.revision !== expected) {
        violate(`timed show ${show.rundownId}: phase ${data?.phase} revision ${data?.revision}, expected ended at revision ${expected}`);
      }
      const events = (await readRundownEvents(redis, show.rundownId, '0-0', { count: 1000 })).flatMap((e) =>
        e.event.payload?.$case === 'status'
          ? [{ ...(e.event.payload.value as unknown as { revision: number; active_cue?: { started_at?: number; duration_ms?: number } }), appendedAt: Number(e.id.split('-')[0]) }]
          : [],
      );
      const revisions = events.map((e) => Number(e.revision));
      const want = Array.from({ length: expected }, (_, i) => i + 1);
      if (JSON.stringify(revisions) !== JSON.stringify(want)) violate(`timed show ${show.rundownId}: status revisions ${JSON.stringify(revisions)}, expected ${JSON.stringify(want)}`);
      // Lateness of each auto-advance: when its status reached the stream against the previous cue's end.
      for (let i = 1; i < events.length; i++) {
        const prev = events[i - 1]!.active_cue;
        deadlines++;
        if (prev?.started_at !== undefined) maxLateMs = Math.max(maxLateMs, events[i]!.appendedAt - (Number(prev.started_at) + Number(prev.duration_ms)));
      }
    }

    // Action rundowns: acknowledged revisions grow; served status = stored status.
    let actionsAcked = 0;
    for (const log of ctx.actionLogs) {
      actionsAcked += log.acked.length;
      for (let i = 1; i < log.acked.length; i++) {
        if (!(log.acked[i]! > log.acked[i - 1]!)) violate(`actions on ${log.rundownId}: revision ${log.acked[i]} acknowledged after ${log.acked[i - 1]}`);
      }
      const served = (await request('verify', 'GET', `${base}/rundowns/${log.rundownId}/status`, { token: ctx.caller })).body?.data as
        | { revision?: number; active_cue?: { id?: string } | null }
        | undefined;
      const row = (await db.query<{ revision: string; active_cue_id: string }>('SELECT revision, active_cue_id FROM runner.shows WHERE rundown_id = $1', [log.rundownId])).rows[0];
      if (served?.revision !== Number(row?.revision) || served?.active_cue?.id !== row?.active_cue_id) {
        violate(`status of ${log.rundownId} served ${JSON.stringify(served)} but stored ${JSON.stringify(row)}`);
      }
      if ((served?.revision ?? 0) < (log.acked.at(-1) ?? 0)) violate(`status of ${log.rundownId} went back: ${served?.revision} < ${log.acked.at(-1)}`);
    }

    // SSE: every acknowledged cue of its rundown arrived; status revisions without gaps.
    for (const f of ctx.sse) {
      for (const w of writes) {
        if (w.rundownId === f.rundownId && w.acknowledged && w.cueId && !f.cueIds.has(w.cueId)) violate(`SSE client of ${f.rundownId} missed cue ${w.marker}`);
      }
      const log = ctx.actionLogs.find((l) => l.rundownId === f.rundownId);
      if (log && f.revisions.size > 0) {
        const seen = [...f.revisions].sort((a, b) => a - b);
        for (let r = seen[0]!; r <= seen.at(-1)!; r++) if (!f.revisions.has(r)) violate(`SSE client of ${f.rundownId} missed status revision ${r}`);
        if (seen.at(-1)! < (log.acked.at(-1) ?? 0)) violate(`SSE client of ${f.rundownId} stopped at revision ${seen.at(-1)} (last acknowledged ${log.acked.at(-1)})`);
      }
    }

    // v0: connected again, and a change made now reaches every client.
    for (const log of ctx.actionLogs) {
      const clients = ctx.v0.filter((c) => c.rundownId === log.rundownId);
      const since = Date.now();
      let changed: Answer | undefined;
      for (const verb of ['next', 'previous']) {
        changed = await request('verify', 'POST', `${base}/rundowns/${log.rundownId}/action:${verb}`, { token: ctx.caller });
        if (changed.status === 200) break;
      }
      const cueId = (changed?.body?.data?.active_cue as { id?: string } | undefined)?.id;
      for (const c of clients) {
        try {
          await until('the v0 client to hear the change', async () => c.timesnaps.some((t) => t.at >= since && t.cueId === cueId), 15_000);
        } catch {
          violate(`v0 client of ${log.rundownId} (connected: ${c.socket.connected}, connects: ${c.connects}) did not hear the last change`);
        }
      }
    }

    const acknowledged = writes.filter((w) => w.acknowledged).length;
    return {
      acknowledged,
      unacknowledged: writes.length - acknowledged,
      lost,
      duplicated,
      cellsAcked: writes.filter((w) => w.cellAcknowledged).length,
      cellsLost,
      timedShows: timedShows.length,
      deadlines,
      maxLateMs,
      actionsAcked,
      sseClients: ctx.sse.length,
      sseReconnects: ctx.sse.reduce((sum, f) => sum + f.reconnects, 0),
      sseResumed: ctx.sse.reduce((sum, f) => sum + f.resumed, 0),
      v0Connects: ctx.v0.reduce((sum, c) => sum + c.connects, 0),
    };
  } finally {
    await db.end();
    redis.disconnect();
  }
}

function printReport(results: FaultResult[], v: Verification): void {
  const load = samples.filter((s) => s.route !== 'setup' && s.route !== 'verify');
  const count = (o: Outcome) => load.filter((s) => s.outcome === o).length;
  const pad = (s: string | number, n: number) => String(s).padEnd(n);
  const lpad = (s: string | number, n: number) => String(s).padStart(n);
  console.log('\nFault                  back after   longest unavailability   (route)          requests  failed  problem+json  conn. refused');
  for (const r of results) {
    const during = load.filter((s) => s.start >= r.start && s.start <= r.end);
    const failed = during.filter((s) => s.outcome !== 'ok' && s.outcome !== 'client_error');
    const label = SERVICE_FAULTS.includes(r.name) ? `kill -9 ${r.name}` : r.name === 'redis' ? 'Redis stop/start' : 'PostgreSQL restart';
    console.log(
      `${pad(label, 22)} ${lpad(`${r.restoredMs} ms`, 10)}   ${lpad(`${r.longestMs} ms`, 22)}   ${pad(`(${r.longestRoute})`, 16)} ${lpad(during.length, 8)}  ${lpad(failed.length, 6)}  ${lpad(failed.filter((s) => s.outcome === 'problem').length, 12)}  ${lpad(failed.filter((s) => s.outcome === 'network').length, 13)}`,
    );
  }
  const codes = new Map<string, number>();
  for (const s of load) if (s.outcome === 'problem') codes.set(`${s.status} ${s.code}`, (codes.get(`${s.status} ${s.code}`) ?? 0) + 1);
  console.log(`
requests        ${load.length} (ok ${count('ok')}, refused by the API ${count('client_error')}, problem+json ${count('problem')}, connection refused/reset ${count('network')}, bad errors ${count('bad')}, hangs > ${HANG_MS} ms ${count('hang')})
error answers   ${[...codes].map(([c, n]) => `${c} x${n}`).join(', ') || 'none'}
writes          ${v.acknowledged + v.unacknowledged} cue creates: acknowledged ${v.acknowledged}, lost ${v.lost}, duplicated ${v.duplicated}, given up ${v.unacknowledged}
cell writes     acknowledged ${v.cellsAcked}, lost ${v.cellsLost}
actions         acknowledged ${v.actionsAcked} (next/previous) + ${v.timedShows} show starts
deadlines       ${v.timedShows} timed shows, ${v.deadlines} auto-advance deadlines checked (each fired once); latest ${v.maxLateMs} ms after its time
SSE             ${v.sseClients} clients, ${v.sseReconnects} reconnect attempts with Last-Event-ID (${v.sseResumed} resumed streams), nothing missed unless listed below
Socket.IO v0    ${v.v0Connects} connects (incl. reconnects)
violations      ${violations.length}`);
}

void main();
