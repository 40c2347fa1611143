// `npm run chaos`: fault tests under a steady mixed load (issue 13, item 2); `npm run chaos -- --rolling`:
// a rolling restart of every replica of every service under that load (scripts/chaos/rolling.ts).
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
// The load and its checks live in scripts/chaos/load.ts (shared with the rolling restart).
//
// `npm run chaos -- --redis sentinel`: the same load with Redis as a Sentinel group (one primary, one
// replica, three sentinels: test/support/redis-harness.ts on --redis-port..+4) and one fault, the
// primary killed (-9): Sentinel promotes the replica, every connection finds the new primary by
// itself, the killed one comes back as a replica after --outage-seconds. The same checks, and the
// time until every route answers again (docs/scale-out.md#redis-failover).
//
// options: --steady-seconds 8 (load between faults) --faults all|gateway,auth,...,redis,postgres
//          --pg-port 61600 --redis-port 61601 (above the ephemeral range, where free ports of tests never land)
//          --outage-seconds 3 --verbose
//          --rolling [--replicas 2] [--max-connection-age-ms 30000]: the rolling restart instead of the faults
// Traffic goes to 127.0.0.1 only; every loop stops by itself (time- and count-bounded).
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { createDatabase } from '../test/support/infra.js';
import { startSentinelGroup, type SentinelHarness } from '../test/support/redis-harness.js';
import { pidListeningOn } from '../test/support/processes.js';
import { HANG_MS, MixedLoad, type ActionLog, type Outcome, type Verification } from './chaos/load.js';
import { formatReport, rollingRestart } from './chaos/rolling.js';
import { ensureBuilt } from './launcher/build.js';
import { freePorts, startSystem, type LauncherReady, type RunningSystem } from './launcher/child.js';
import { grpcHealth, httpReady } from './launcher/health.js';
import { redisPing, startPrivatePostgres, startPrivateRedis, stopPrivatePostgres } from './launcher/infra.js';
import { loadSecrets } from './launcher/secrets.js';
import { resolvePorts, SERVICES } from './launcher/services.js';
import { Cleanup, REPO_ROOT, sleep } from './launcher/util.js';

const { values } = parseArgs({
  options: {
    'steady-seconds': { type: 'string', default: '8' },
    'outage-seconds': { type: 'string', default: '3' },
    faults: { type: 'string', default: 'all' },
    'pg-port': { type: 'string', default: process.env.CHAOS_PG_PORT ?? '61600' },
    'redis-port': { type: 'string', default: process.env.CHAOS_REDIS_PORT ?? '61601' },
    verbose: { type: 'boolean', default: false },
    rolling: { type: 'boolean', default: false },
    redis: { type: 'string', default: 'standalone' },
    replicas: { type: 'string', default: '2' },
    'max-connection-age-ms': { type: 'string', default: '30000' },
  },
  strict: true,
});
const STEADY_MS = Number(values['steady-seconds']) * 1000;
const OUTAGE_MS = Number(values['outage-seconds']) * 1000;
const PG_PORT = Number(values['pg-port']);
const REDIS_PORT = Number(values['redis-port']);
const VERBOSE = values.verbose;
/** kill -9 of each service the launcher runs, from the services table (the gateway first: its outage is the one clients see). */
const SERVICE_FAULTS = ['gateway', ...SERVICES.map((s) => s.name).filter((name) => name !== 'gateway')];
const SENTINEL = values.redis === 'sentinel';
if (!['standalone', 'sentinel'].includes(values.redis)) throw new Error('--redis: standalone or sentinel');
const ALL_FAULTS = SENTINEL ? ['redis-failover', ...SERVICE_FAULTS, 'postgres'] : [...SERVICE_FAULTS, 'redis', 'postgres'];
const FAULTS = values.faults === 'all' ? (SENTINEL ? ['redis-failover'] : ALL_FAULTS) : values.faults.split(',').map((f) => f.trim());
for (const f of FAULTS) if (!ALL_FAULTS.includes(f)) throw new Error(`unknown fault ${f}; known: ${ALL_FAULTS.join(', ')}`);

/** Hard cap on the whole run. */
const RUN_CAP_MS = 30 * 60_000;
const RUN = Date.now().toString(36);

let load = new MixedLoad('', RUN, VERBOSE);
let sentinel: SentinelHarness | undefined;
const note = (what: string): void => console.log(`[chaos ${new Date().toISOString().slice(11, 23)}] ${what}`);

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
    async () => ROUTES.every((route) => load.samples.some((s) => s.route === route && s.start >= since && s.outcome === 'ok')),
    120_000,
  );
}

/** Longest span, per route class, from a failed request to the end of the next successful one. */
function longestUnavailability(from: number, to: number): { ms: number; route: string } {
  let best = { ms: 0, route: '-' };
  for (const route of [...ROUTES, 'sse open']) {
    const rows = load.samples.filter((s) => s.route === route && s.start >= from - 2000 && s.start <= to).sort((a, b) => a.start - b.start);
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
  for (const o of load.v0Outages) {
    if (o.start >= from - 2000 && o.start <= to && o.end - o.start > best.ms) best = { ms: o.end - o.start, route: 'v0 socket' };
  }
  return best;
}

// ---------------------------------------------------------------- main

/**
 * A private PostgreSQL and Redis (Redis with an append-only file, as a deployment holding BullMQ jobs
 * runs it) in `dataDir`, a fresh database on it; stopped by `cleanup`. Redis gets a cleanup of its
 * own, so the Redis fault can stop and start it again.
 */
async function privateServers(dataDir: string, cleanup: Cleanup, name: string): Promise<{ redisEnv: Record<string, string>; database: Awaited<ReturnType<typeof createDatabase>> }> {
  note(`private PostgreSQL on 127.0.0.1:${PG_PORT} and Redis on 127.0.0.1:${REDIS_PORT} in ${dataDir}`);
  await startPrivatePostgres(dataDir, PG_PORT, cleanup);
  if (SENTINEL) {
    sentinel = await startSentinelGroup({ basePort: REDIS_PORT });
    cleanup.add('Sentinel group', () => sentinel!.stop());
    note(`Sentinel group: primary ${sentinel.dataPorts[0]}, replica ${sentinel.dataPorts[1]}, sentinels ${sentinel.sentinels}`);
    const redisEnv = { REDIS_MODE: 'sentinel', REDIS_SENTINELS: sentinel.sentinels, REDIS_SENTINEL_MASTER: sentinel.master };
    return { redisEnv, database: await createDatabase(`postgres://postgres@127.0.0.1:${PG_PORT}/postgres`, name) };
  }
  const redisCleanup = new Cleanup();
  cleanup.add('private Redis', () => redisCleanup.run());
  await startPrivateRedis(dataDir, REDIS_PORT, redisCleanup, { appendOnly: true });
  const redisUrl = `redis://127.0.0.1:${REDIS_PORT}/0`;
  const flush = new Redis(redisUrl);
  await flush.flushdb(); // the private server holds nothing else
  flush.disconnect();
  return { redisEnv: { REDIS_URL: redisUrl }, database: await createDatabase(`postgres://postgres@127.0.0.1:${PG_PORT}/postgres`, name) };
}

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
    load.stopLiveClients();
    await system?.stop();
    await cleanup.run();
  };
  process.once('SIGINT', () => void stopAll().then(() => process.exit(130)));

  try {
    // 1. Private servers this run may kill (never the shared ones on 5432/6379).
    const { redisEnv, database } = await privateServers(dataDir, cleanup, 'chaos');

    // 2. The system, through the launcher (compiled, supervised).
    system = await startSystem({
      env: { ...(await freePorts()), DATABASE_URL: database.url, ...redisEnv, DATA_DIR: path.join(dataDir, 'launcher'), LOG_LEVEL: 'warn' },
      verbose: VERBOSE,
      timeoutMs: 600_000, // a first run builds every service, on a shared machine
    });
    const ready = system.ready;
    load = new MixedLoad(ready.base_url, RUN, VERBOSE);
    note(`system ready in ${system.startupMs} ms (launcher pid ${ready.pid})`);

    // 3. A team, its tokens, the rundowns the load works on.
    const { owner, caller, v0Token } = await load.team(ready.admin_url, ready.admin_secret);
    const setup = (body: unknown) => load.rundown(owner, body);
    const writeRundowns = await Promise.all([0, 1, 2].map((i) => setup({ title: `chaos-${RUN}-writes-${i}`, columns: [{ name: 'Script' }] })));
    const actionRundowns = await Promise.all(
      [0, 1].map((i) => setup({ title: `chaos-${RUN}-actions-${i}`, cues: ['A', 'B', 'C', 'D'].map((t) => ({ title: t, duration_ms: 600_000 })) })),
    );
    for (const r of actionRundowns) await load.start(caller, r.id);

    // 4. Load and live clients.
    const sse = [...writeRundowns, ...actionRundowns].map((r) => load.followSse(caller, r.id));
    const v0 = actionRundowns.flatMap((r) => [load.followV0(ready.public_url, v0Token, r.id, false), load.followV0(ready.public_url, v0Token, r.id, true)]);
    const actionLogs: ActionLog[] = actionRundowns.map((r) => ({ rundownId: r.id, acked: [] }));
    const loops = [
      ...writeRundowns.map((r, i) => load.writer(owner, r.id, r.columnId!, i)),
      ...actionLogs.map((log) => load.actor(caller, log)),
      load.showMaker(owner, caller),
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
      let afterRecovery: (() => Promise<void>) | undefined;
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
      } else if (fault === 'redis-failover') {
        const primary = await sentinel!.primaryPort();
        note(`kill -9 the Redis primary (port ${primary})`);
        sentinel!.kill(primary);
        await until('Sentinel to promote the replica', async () => (await sentinel!.primaryPort()) !== primary, 60_000);
        restoredAt = Date.now();
        note(`Sentinel promoted ${await sentinel!.primaryPort()} after ${restoredAt - start} ms`);
        // Once every route answers again, the killed primary comes back (empty) as a replica of the new
        // one, as an orchestrator restarts it (until then the new primary has no replica: nothing to WAIT for).
        afterRecovery = async () => {
          await sleep(OUTAGE_MS);
          await sentinel!.restart(primary);
          note(`port ${primary} back as a replica`);
        };
      } else if (fault === 'redis') {
        const redisUrl = redisEnv.REDIS_URL!;
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
      await afterRecovery?.();
      await sleep(STEADY_MS);
    }

    // 6. Stop the load, let the shows run out, then verify.
    load.stop();
    note('stopping the load');
    await Promise.all(loops);
    await sleep(Math.max(3000, load.lastShowEnd() + 3000 - Date.now()));
    load.stopLiveClients();
    await Promise.all(sse.map((f) => f.done));

    const verification = await load.verify({ databaseUrl: database.url, redisEnv, caller, actionLogs, sse, v0 });
    for (const f of v0) f.socket.close();
    printReport(results, verification);
    await stopAll();
    await database.drop().catch(() => undefined);
    // The restarted PostgreSQL is stopped by now; the database went with the run's server anyway.
  } catch (error) {
    console.error(error instanceof Error ? error.stack : error);
    load.violate(`run failed: ${(error as Error).message}`);
    await stopAll();
  }
  clearTimeout(hardStop);
  finish(load.violations);
  console.log('\nPASSED: no write lost or duplicated, runner and live clients whole, every error a problem+json in time');
  process.exit(0);
}

function finish(violations: readonly string[]): void {
  if (violations.length > 0) {
    console.log(`\nFAILED: ${violations.length} violation(s)`);
    for (const v of violations.slice(0, 40)) console.log(`  - ${v.slice(0, 400)}`);
    if (violations.length > 40) console.log(`  ... and ${violations.length - 40} more`);
    process.exit(1);
  }
}

/**
 * `--rolling`: `--replicas` (2) of every service in the local scale-out on a private PostgreSQL and
 * Redis, the mixed load, every replica replaced in turn; exits 1 on any failed request or violation.
 */
async function rolling(): Promise<void> {
  const hardStop = setTimeout(() => {
    console.error(`chaos --rolling: still running after ${RUN_CAP_MS / 60_000} min; giving up`);
    process.exit(2);
  }, RUN_CAP_MS);
  hardStop.unref();
  const cleanup = new Cleanup();
  const dataDir = path.join(REPO_ROOT, '.data', 'rolling');
  mkdirSync(dataDir, { recursive: true });
  process.once('SIGINT', () => void cleanup.run().then(() => process.exit(130)));
  let violations: string[] = [];
  try {
    const { redisEnv, database } = await privateServers(dataDir, cleanup, 'rolling');
    const redisUrl = redisEnv.REDIS_URL;
    if (!redisUrl) throw new Error('--rolling runs on one Redis server (no --redis sentinel)');
    await ensureBuilt();
    mkdirSync(path.join(dataDir, 'launcher'), { recursive: true });
    const { secrets } = await loadSecrets(path.join(dataDir, 'launcher'), {});
    const report = await rollingRestart({
      databaseUrl: database.url,
      redisUrl,
      secrets,
      ports: resolvePorts(await freePorts()).ports,
      replicas: Number(values.replicas),
      steadyMs: STEADY_MS,
      maxConnectionAgeMs: Number(values['max-connection-age-ms']),
      // As the chart: 5 s not ready but serving (there after a 5 s preStop pause), 20 s to drain.
      shutdownDelayMs: 5_000,
      shutdownGraceMs: 20_000,
      lagMs: 1_000,
      note,
      verbose: VERBOSE,
    });
    console.log(`\n${formatReport(report)}`);
    violations = report.violations;
  } catch (error) {
    console.error(error instanceof Error ? error.stack : error);
    violations = [`run failed: ${(error as Error).message}`];
  }
  await cleanup.run();
  clearTimeout(hardStop);
  finish(violations);
  console.log('\nPASSED: no request failed, no write lost or duplicated, every timer fired once, live clients whole, calls spread');
  process.exit(0);
}

function printReport(results: FaultResult[], v: Verification): void {
  const measured = load.samples.filter((s) => s.route !== 'setup' && s.route !== 'verify');
  const count = (o: Outcome) => measured.filter((s) => s.outcome === o).length;
  const pad = (s: string | number, n: number) => String(s).padEnd(n);
  const lpad = (s: string | number, n: number) => String(s).padStart(n);
  console.log('\nFault                  back after   longest unavailability   (route)          requests  failed  problem+json  conn. refused');
  for (const r of results) {
    const during = measured.filter((s) => s.start >= r.start && s.start <= r.end);
    const failed = during.filter((s) => s.outcome !== 'ok' && s.outcome !== 'client_error');
    const label = SERVICE_FAULTS.includes(r.name)
      ? `kill -9 ${r.name}`
      : r.name === 'redis'
        ? 'Redis stop/start'
        : r.name === 'redis-failover'
          ? 'Redis primary -9'
          : 'PostgreSQL restart';
    console.log(
      `${pad(label, 22)} ${lpad(`${r.restoredMs} ms`, 10)}   ${lpad(`${r.longestMs} ms`, 22)}   ${pad(`(${r.longestRoute})`, 16)} ${lpad(during.length, 8)}  ${lpad(failed.length, 6)}  ${lpad(failed.filter((s) => s.outcome === 'problem').length, 12)}  ${lpad(failed.filter((s) => s.outcome === 'network').length, 13)}`,
    );
  }
  const codes = new Map<string, number>();
  for (const s of measured) if (s.outcome === 'problem') codes.set(`${s.status} ${s.code}`, (codes.get(`${s.status} ${s.code}`) ?? 0) + 1);
  console.log(`
requests        ${measured.length} (ok ${count('ok')}, refused by the API ${count('client_error')}, problem+json ${count('problem')}, connection refused/reset ${count('network')}, bad errors ${count('bad')}, hangs > ${HANG_MS} ms ${count('hang')})
error answers   ${[...codes].map(([c, n]) => `${c} x${n}`).join(', ') || 'none'}
writes          ${v.acknowledged + v.unacknowledged} cue creates: acknowledged ${v.acknowledged}, lost ${v.lost}, duplicated ${v.duplicated}, given up ${v.unacknowledged}
cell writes     acknowledged ${v.cellsAcked}, lost ${v.cellsLost}
actions         acknowledged ${v.actionsAcked} (next/previous) + ${v.timedShows} show starts
deadlines       ${v.timedShows} timed shows, ${v.deadlines} auto-advance deadlines checked (each fired once); latest ${v.maxLateMs} ms after its time
SSE             ${v.sseClients} clients, ${v.sseReconnects} reconnect attempts with Last-Event-ID (${v.sseResumed} resumed streams), nothing missed unless listed below
Socket.IO v0    ${v.v0Connects} connects (incl. reconnects)
violations      ${load.violations.length}`);
}

void (values.rolling ? rolling() : main());
