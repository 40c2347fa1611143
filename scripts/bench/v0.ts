// `npm run bench:v0`: the v0 push channel at scale.
//
// Starts, on loopback: the whole system through the launcher (database rundown_bench_v0, Redis db
// BENCH_REDIS_DB, default 8) and two realtime replicas as production runs them (compiled JavaScript,
// `node services/realtime/dist/main.js`, telemetry on and exporting every span to a local sink that
// drops them). 1,000 Socket.IO clients (WebSocket) join one rundown, half on each replica. Then:
//   1. memory per idle socket: the two replicas' resident memory after the clients joined and sat
//      idle, minus before, over the client count (goal <= 20 KB);
//   2. fan-out latency: 100 sequential v1 `action:next` presses; for each, the time from the answer
//      to the last of the 1,000 clients receiving the new `timesnap` (p50/p99, goal p99 <= 50 ms).
//   3. the bare push baseline: the same number of Socket.IO (WebSocket) clients on a plain Socket.IO
//      server in its own process; the time from sending `POST /emit` to the last client's event,
//      against the time from sending `action:next` to the last client's timesnap (the ratio); and
//      the same for what one v0 change sends (`currentCue`, `nextCue`, `timesnap`: `POST /emit-v0`), and
//      once more with the realtime service's write coalescing (Engine.IO's private flush): its CPU gain per change.
// The launcher's own realtime replica stays in the consumer group (a third, client-less replica).
// The clients run in --client-processes child processes (default 4; v0-clients.ts), as real clients
// sit on separate machines: 1,000 clients parsing three or four messages each in one Node process
// made that process the slowest part of the path. Their parsing is still inside the measured time
// (each receipt is stamped on the monotonic clock all processes share), and the bare baseline's
// clients run the same way. To say where
// the time goes, each press is also timed at three points on the server side: the status event
// in the rundown's stream (the outbox relay's part), the `timesnap` broadcast published on the
// adapter's Redis channel (the realtime event path's part, seen by a subscriber of this bench),
// and the first client's receipt; and the CPU each realtime replica, the gateway, runner and rundown
// services and the client processes spent per press (and the bare server and its clients per emit):
// load-independent, unlike the wall-clock figures on a shared machine.
//   options: --clients 1000 --presses 100 --client-processes 4 --json
//            --profile <dir>: the two replicas and the launcher's services write a CPU profile (node --cpu-prof)
//              into <dir> when they stop; the presses' time window goes to <dir>/presses-window.json
//              (profile-summary.ts --window <it> keeps only the samples of the presses)
//
// Traffic goes to loopback only; every wait is bounded.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { eventKeys } from '@rundown/shared';
import { io } from 'socket.io-client';
import { freePort } from '../launcher/child.js';
import { storedSecrets } from '../launcher/secrets.js';
import { monotonicMs, summarize } from './stats.js';
import type { ChildMessage, ParentMessage } from './v0-clients.js';
import { quick, recordFigure, recordLatency } from './figures.js';
import { cpuMs, must, processFootprint, servicePids, startBarePush, startBenchSystem } from './support.js';

const { values } = parseArgs({
  options: {
    clients: { type: 'string', default: quick ? '200' : '1000' },
    presses: { type: 'string', default: quick ? '30' : '100' },
    json: { type: 'boolean', default: false },
    profile: { type: 'string' },
    'client-processes': { type: 'string', default: '4' },
  },
  strict: true,
});
const CLIENTS = Number(values.clients);
const PRESSES = Number(values.presses);
/**
 * Presses before each measured series, not measured: the first fan-outs of a series compile its code
 * paths in the server and in every client process (in one run the system's first three presses took
 * 131, 58 and 58 ms, every later one 3-39 ms, which made the first presses the p99 of 100).
 */
const WARMUP_PRESSES = 5;
const CLIENT_PROCESSES = Math.max(1, Math.min(CLIENTS, Number(values['client-processes'])));
const root = resolve(import.meta.dirname, '../..');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Write syscalls (write, writev, sendmsg...) a process has made: unlike its CPU time, load cannot bend it. */
const writeSyscalls = (pid: number) => Number(/syscw:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1] ?? NaN);


async function startReplica(nodeId: string, env: Record<string, string>): Promise<{ url: string; child: ChildProcess }> {
  const [http, grpc] = await Promise.all([freePort(), freePort()]);
  const profile = values.profile ? ['--cpu-prof', `--cpu-prof-dir=${resolve(values.profile)}`] : [];
  const child = spawn(process.execPath, [...profile, 'services/realtime/dist/main.js'], {
    cwd: root,
    env: { ...process.env, ...env, NODE_ID: nodeId, HOST: '127.0.0.1', HTTP_PORT: String(http), GRPC_PORT: String(grpc) },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const url = `http://127.0.0.1:${http}`;
  for (const deadline = Date.now() + 60_000; ; ) {
    if (child.exitCode !== null) throw new Error(`realtime ${nodeId} exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/readyz`)).status === 200) return { url, child };
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`realtime ${nodeId} not ready in 60 s`);
    await sleep(200);
  }
}

/**
 * CLIENTS Socket.IO clients spread over CLIENT_PROCESSES child processes (v0-clients.ts), the k-th
 * client on urls[k % urls.length]. `all(cueId)` resolves when every client has received the cue's
 * timesnap (or after 5 s, with how many did not): the first and last receipt on the monotonic clock.
 */
async function startClients(urls: string[], options: { path?: string; auth?: Record<string, string> } = {}) {
  const profile = values.profile ? ['--cpu-prof', `--cpu-prof-dir=${resolve(values.profile, 'clients')}`] : [];
  const children = Array.from({ length: CLIENT_PROCESSES }, () =>
    spawn(process.execPath, [...profile, '--conditions=source', '--import', 'tsx', resolve(import.meta.dirname, 'v0-clients.ts')], {
      cwd: root,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    }),
  );
  const reports = new Map<string, { first: number; last: number }[]>();
  const counts = new Map<string, number[]>();
  let wake = () => {};
  for (const child of children) {
    child.on('message', (message: ChildMessage) => {
      if (message.type === 'all') reports.set(message.cueId, [...(reports.get(message.cueId) ?? []), message]);
      else if (message.type === 'count') counts.set(message.cueId, [...(counts.get(message.cueId) ?? []), message.seen]);
      else return;
      wake();
    });
  }
  const until = async (done: () => boolean, deadline: number) => {
    while (!done() && Date.now() < deadline) await new Promise<void>((r) => ((wake = r), setTimeout(r, 50)));
    return done();
  };
  const tell = (child: ChildProcess, message: ParentMessage) => child.send(message);
  // A join that fails stops every client process (the caller has no handle on them yet).
  await Promise.all(
    children.map((child, i) => {
      const offset = Math.floor((i * CLIENTS) / children.length);
      const count = Math.floor(((i + 1) * CLIENTS) / children.length) - offset;
      const joined = new Promise<void>((ok, fail) => {
        child.once('exit', (code) => fail(new Error(`a client process exited with ${code}`)));
        child.on('message', (message: ChildMessage) => {
          if (message.type === 'joined') ok();
          if (message.type === 'error') fail(new Error(message.message));
        });
      });
      // 50 joins at a time in all, as one process made them (each takes the rundown's lock).
      tell(child, { type: 'join', urls, ...options, offset, count, batch: Math.ceil(50 / children.length) });
      return joined;
    }),
  ).catch((error: unknown) => {
    for (const child of children) child.kill('SIGTERM');
    throw error;
  });
  return {
    async all(cueId: string): Promise<{ first: number; last: number; missing: number }> {
      if (!(await until(() => reports.get(cueId)?.length === children.length, Date.now() + 5_000))) {
        for (const child of children) tell(child, { type: 'count', cueId });
        await until(() => counts.get(cueId)?.length === children.length, Date.now() + 5_000);
      }
      const got = reports.get(cueId) ?? [];
      const seen = got.length === children.length ? CLIENTS : (counts.get(cueId) ?? []).reduce((a, b) => a + b, 0);
      return { first: Math.min(...got.map((r) => r.first)), last: Math.max(...got.map((r) => r.last)), missing: CLIENTS - seen };
    },
    /** CPU time (ms) the client processes have used so far. */
    cpuMs: () => children.reduce((total, child) => total + cpuMs(child.pid!), 0),
    close: () =>
      Promise.all(
        children.map(
          (child) =>
            new Promise((done) => {
              if (child.exitCode !== null) return done(undefined);
              child.once('exit', done);
              tell(child, { type: 'close' });
            }),
        ),
      ),
  };
}

const cleanups: (() => Promise<unknown> | void)[] = [];
let failed = false;
try {
  // `npm run bench` has built every workspace once already.
  if (process.env.BENCH_BUILT !== '1') {
    console.error('building the shared library and the realtime service (tsc)...');
    const build = spawnSync('npm', ['run', 'build', '-w', '@rundown/shared', '-w', '@rundown/realtime'], { cwd: root, stdio: 'inherit' });
    if (build.status !== 0) throw new Error('build failed');
  }

  // The bare push baseline first (its clients closed before the system's join): emit sent -> last client.
  const bare = await startBarePush();
  cleanups.push(() => void bare.child.kill('SIGTERM'));
  const bareClients = await startClients([bare.url]);
  cleanups.push(() => bareClients.close());
  /**
   * One bare series: `WARMUP_PRESSES` unmeasured presses, then `PRESSES` measured, each POSTing the
   * body of `change(cueId, press)` to `path` and waiting for the last client to hear `cueId`; with the
   * server's and the clients' CPU per emit (the warm-up presses included).
   */
  const bareSeries = async (path: string, prefix: string, change: (cueId: string, press: number) => unknown, server = bare, clients = bareClients) => {
    const latencies: number[] = [];
    const cpuBefore = cpuMs(server.child.pid!);
    const clientCpuBefore = clients.cpuMs();
    for (let p = 0; p < PRESSES + WARMUP_PRESSES; p++) {
      const cueId = `${prefix}-${p}`;
      const body = JSON.stringify(change(cueId, p));
      const sent = monotonicMs();
      await (await fetch(`${server.url}${path}`, { method: 'POST', body })).text();
      const { last } = await clients.all(cueId);
      if (p >= WARMUP_PRESSES) latencies.push(last - sent);
    }
    return {
      latencies,
      cpuPerEmit: (cpuMs(server.child.pid!) - cpuBefore) / (PRESSES + WARMUP_PRESSES),
      clientCpuPerEmit: (clients.cpuMs() - clientCpuBefore) / (PRESSES + WARMUP_PRESSES),
    };
  };
  const { latencies: bareLatencies, cpuPerEmit: bareCpuPerEmit, clientCpuPerEmit: bareClientCpuPerEmit } = await bareSeries('/emit', 'bare', (cueId) => ({ cueId }));
  // The same with what one v0 change sends: `currentCue`, `nextCue` and `timesnap`, records as v0's.
  const cueRecord = (n: number) => {
    const at = new Date().toISOString();
    return { id: `bare-v0-cue-${n}`, type: 'cue', title: `Q${n}`, subtitle: '', duration: 600_000, backgroundColor: '', locked: false, createdAt: at, updatedAt: at };
  };
  const {
    latencies: bareV0Latencies,
    cpuPerEmit: bareV0CpuPerEmit,
    clientCpuPerEmit: bareV0ClientCpuPerEmit,
  } = await bareSeries('/emit-v0', 'bare-v0', (cueId, p) => {
    const kickoff = Date.now();
    return { currentCue: { ...cueRecord(p), id: cueId }, nextCue: cueRecord(p + 1), timesnap: { lastStop: null, kickoff, running: true, cueId, deadline: kickoff + 600_000 } };
  });
  await bareClients.close();
  bare.child.kill('SIGTERM');
  const bareStats = summarize(bareLatencies);
  const bareV0Stats = summarize(bareV0Latencies);
  // The same bare server writing as the realtime service does (one write per connection per tick, Engine.IO's
  // private flush): what that workaround saves of the server's CPU per v0 change.
  const coalesced = await startBarePush({ coalesce: true });
  cleanups.push(() => void coalesced.child.kill('SIGTERM'));
  const coalescedClients = await startClients([coalesced.url]);
  cleanups.push(() => coalescedClients.close());
  const { latencies: coalescedLatencies, cpuPerEmit: coalescedCpuPerEmit } = await bareSeries(
    '/emit-v0',
    'coalesced-v0',
    (cueId, p) => {
      const kickoff = Date.now();
      return { currentCue: { ...cueRecord(p), id: cueId }, nextCue: cueRecord(p + 1), timesnap: { lastStop: null, kickoff, running: true, cueId, deadline: kickoff + 600_000 } };
    },
    coalesced,
    coalescedClients,
  );
  await coalescedClients.close();
  coalesced.child.kill('SIGTERM');
  const coalescedStats = summarize(coalescedLatencies);
  const coalescingGain = (100 * (bareV0CpuPerEmit - coalescedCpuPerEmit)) / bareV0CpuPerEmit;

  const { system, telemetry } = await startBenchSystem('rundown_bench_v0', 8, cleanups, {
    env: values.profile ? { LAUNCH_NODE_ARGS: `--cpu-prof --cpu-prof-dir=${resolve(values.profile)}` } : {},
  });
  const { ready } = system;
  const secrets = await storedSecrets(ready.data_dir);
  const replicaEnv = {
    ...telemetry,
    OTEL_SERVICE_NAME: 'realtime',
    REDIS_URL: ready.redis_url,
    RUNDOWN_ADDR: `127.0.0.1:${ready.grpc_ports.rundown}`,
    RUNNER_ADDR: `127.0.0.1:${ready.grpc_ports.runner}`,
    V0_TOKEN_SECRET: secrets.V0_TOKEN_SECRET!,
    INTERNAL_CONTEXT_KEYS: secrets.INTERNAL_CONTEXT_KEYS!,
    // 1,000 connections of one team in a minute: the bench lifts the v0 budget on its replicas.
    V0_RATE_LIMIT_PER_MINUTE: '1000000',
    LOG_LEVEL: 'warn',
  };
  const replicas = await Promise.all(['bench-a', 'bench-b'].map((id) => startReplica(id, replicaEnv)));
  // Stopped and waited for (a profile is written at exit).
  for (const r of replicas) cleanups.push(() => new Promise((done) => (r.child.exitCode !== null ? done(undefined) : (r.child.once('exit', done), r.child.kill('SIGTERM')))));

  const adminPost = (path: string, body: unknown) => must(`${ready.admin_url}${path}`, 'POST', ready.admin_secret, body, 201);
  const team = await adminPost('/teams', { name: 'bench-v0', plan: 'paid', rate_limit_per_minute: 1_000_000 });
  const owner = (await adminPost(`/teams/${team.id}/tokens`, { role: 'OWNER', ttl_seconds: 3600 })).token as string;
  const v0Token = (await adminPost(`/teams/${team.id}/v0-token`, {})).token as string;
  const rundown = await must(`${ready.base_url}/rundowns`, 'POST', owner, {
    title: 'bench v0',
    cues: Array.from({ length: WARMUP_PRESSES + PRESSES + 2 }, (_, i) => ({ title: `Q${i}`, duration_ms: 600_000 })),
  }, 201);
  await must(`${ready.base_url}/rundowns/${rundown.id}/action:start`, 'POST', owner);

  // Warm each replica (code paths, the rundown's view), then take the idle baseline.
  const warm = replicas.map((r) => io(r.url, { path: '/api-v0/socket.io', auth: { rundownId: rundown.id, apiToken: v0Token }, transports: ['websocket'] }));
  await Promise.all(warm.map((s) => new Promise((r) => s.once('serverTime', r))));
  for (const s of warm) s.close();
  await sleep(2_000);
  const before = replicas.map((r) => processFootprint(r.child.pid!).rssKb);

  // The clients, half on each replica.
  const t0 = performance.now();
  const clients = await startClients(replicas.map((r) => r.url), { path: '/api-v0/socket.io', auth: { rundownId: rundown.id, apiToken: v0Token } });
  cleanups.push(() => clients.close());
  const joinSeconds = (performance.now() - t0) / 1000;
  await sleep(5_000);
  const after = replicas.map((r) => processFootprint(r.child.pid!).rssKb);
  const perSocketKb = (after.reduce((a, b) => a + b, 0) - before.reduce((a, b) => a + b, 0)) / CLIENTS;

  // Where the time goes: when each event lands in the rundown's stream (the outbox relay's part).
  const streamReader = new Redis(ready.redis_url);
  cleanups.push(() => streamReader.disconnect());
  const landed: number[] = [];
  let reading = true;
  cleanups.push(() => {
    reading = false;
  });
  void (async () => {
    let last = '$';
    while (reading) {
      const reply = (await streamReader.xread('BLOCK', 1_000, 'STREAMS', eventKeys.rundown(rundown.id), last).catch(() => null)) as [string, [string, string[]][]][] | null;
      for (const [id] of reply?.[0]?.[1] ?? []) {
        landed.push(monotonicMs());
        last = id;
      }
    }
  })();
  // Where the server path ends: the realtime replica publishing the `timesnap` broadcast for the
  // other replicas (the adapter's channel of the rundown's room; the publisher emits to its own
  // clients at the same moment).
  const adapterTap = new Redis(ready.redis_url);
  cleanups.push(() => adapterTap.disconnect());
  const published: number[] = [];
  // The message is MessagePack ([uid, packet, opts]); the event name is a short string in it, so the
  // bytes of the string 'timesnap' (0xa8: an 8-byte string) say which broadcast it is.
  const timesnapName = Buffer.concat([Buffer.from([0xa8]), Buffer.from('timesnap')]);
  adapterTap.on('messageBuffer', (_channel: Buffer, message: Buffer) => {
    if (message.includes(timesnapName)) published.push(monotonicMs());
  });
  await adapterTap.subscribe(`socket.io#/#rundown:{${rundown.id}}#`);
  await sleep(200);

  // The system's warm-up presses, as the bare series had theirs.
  let missing = 0;
  for (let p = 0; p < WARMUP_PRESSES; p++) {
    const status = await must(`${ready.base_url}/rundowns/${rundown.id}/action:next`, 'POST', owner);
    missing += (await clients.all(status.active_cue.id as string)).missing;
  }

  // CPU per press: the two bench replicas, the launcher's services (its client-less realtime replica
  // among them), the client processes.
  const services = [...servicePids(ready.pid)].filter(([name]) => ['realtime', 'gateway', 'runner', 'rundown'].includes(name));
  const processCpu = () => [...replicas.map((r) => cpuMs(r.child.pid!)), ...services.map(([, pid]) => cpuMs(pid)), clients.cpuMs()];
  const cpuNames = ['bench-a', 'bench-b', ...services.map(([name]) => (name === 'realtime' ? "the launcher's realtime" : name)), `the ${CLIENTS} clients`];
  const cpuBefore = processCpu();
  const replicaWrites = () => replicas.map((r) => writeSyscalls(r.child.pid!));
  const writesBefore = replicaWrites();
  const window = { from: monotonicMs() * 1000, to: 0 };

  // Presses: answer -> the last client's timesnap for the new cue.
  const streamLags: number[] = [];
  const publishLags: number[] = [];
  const spreads: number[] = [];
  const latencies: number[] = [];
  const fromSent: number[] = [];
  const firsts: number[] = [];
  for (let p = 0; p < PRESSES; p++) {
    const landedBefore = landed.length;
    const sent = monotonicMs();
    const publishedBefore = published.length;
    const status = await must(`${ready.base_url}/rundowns/${rundown.id}/action:next`, 'POST', owner);
    const answered = monotonicMs();
    const cueId = status.active_cue.id as string;
    const got = await clients.all(cueId);
    missing += got.missing;
    latencies.push(got.last - answered);
    fromSent.push(got.last - sent);
    firsts.push(got.first - answered);
    if (landed.length > landedBefore) streamLags.push(landed[landedBefore]! - answered);
    if (published.length > publishedBefore) publishLags.push(published[publishedBefore]! - answered);
    spreads.push(got.last - got.first);
  }
  window.to = monotonicMs() * 1000;
  if (values.profile) writeFileSync(resolve(values.profile, 'presses-window.json'), JSON.stringify(window));
  const cpuAfter = processCpu();
  const writesAfter = replicaWrites();
  const perPress = (before: number, after: number) => Number(((after - before) / PRESSES).toFixed(2));
  const cpuPerPress = cpuAfter.map((after, i) => perPress(cpuBefore[i]!, after));
  const writesPerPress = writesAfter.map((after, i) => perPress(writesBefore[i]!, after));
  const s = summarize(latencies);
  const f = summarize(firsts);
  const l = summarize(streamLags);
  const sentStats = summarize(fromSent);
  recordFigure({ bench: 'v0', name: 'memory per idle Socket.IO socket (RSS)', unit: 'KB', n: CLIENTS, value: perSocketKb, goal: '<= 20' });
  recordLatency('v0', `action:next answer -> last of ${CLIENTS} sockets`, s, { goal: 'p99 <= 50' });
  recordLatency('v0', `bare Socket.IO: emit sent -> last of ${CLIENTS}`, bareStats);
  recordLatency('v0', `action:next sent -> last of ${CLIENTS} sockets`, sentStats, { baseline: 'bare Socket.IO emit (p99)', ratio: sentStats.p99 / bareStats.p99 });
  recordLatency('v0', `bare Socket.IO, a v0 change's 3 events: emit sent -> last of ${CLIENTS}`, bareV0Stats);
  recordLatency('v0', `bare Socket.IO with write coalescing, a v0 change: emit sent -> last of ${CLIENTS}`, coalescedStats, { baseline: 'bare Socket.IO (p99)', ratio: coalescedStats.p99 / bareV0Stats.p99 });
  recordFigure({ bench: 'workarounds', name: 'Engine.IO flush: write coalescing, server CPU per v0 change', unit: '%', value: coalescingGain, baseline: `plain Socket.IO ${bareV0CpuPerEmit.toFixed(2)} ms`, goal: '>= 10 to keep' });
  recordFigure({ bench: 'v0', name: 'socket events missed', unit: 'count', value: missing, goal: '0' });
  const pub = summarize(publishLags);
  const spread = summarize(spreads);
  recordLatency('v0', 'answer -> timesnap broadcast published (server side)', pub);
  recordLatency('v0', 'first -> last client (fan-out and receiving)', spread);
  const result = {
    clients: CLIENTS,
    replicas: replicas.length,
    join_seconds: Number(joinSeconds.toFixed(2)),
    rss_kb_before: before,
    rss_kb_after: after,
    memory_per_idle_socket_kb: Number(perSocketKb.toFixed(2)),
    presses: PRESSES,
    fanout_ms: { p50: Number(s.p50.toFixed(2)), p90: Number(s.p90.toFixed(2)), p99: Number(s.p99.toFixed(2)), max: Number(s.max.toFixed(2)), mean: Number(s.mean.toFixed(2)) },
    event_in_stream_ms: { p50: Number(l.p50.toFixed(2)), p99: Number(l.p99.toFixed(2)) },
    timesnap_published_ms: { p50: Number(pub.p50.toFixed(2)), p99: Number(pub.p99.toFixed(2)) },
    first_client_ms: { p50: Number(f.p50.toFixed(2)), p99: Number(f.p99.toFixed(2)) },
    first_to_last_client_ms: { p50: Number(spread.p50.toFixed(2)), p99: Number(spread.p99.toFixed(2)) },
    cpu_ms_per_press: Object.fromEntries(cpuNames.map((name, i) => [name, cpuPerPress[i]])),
    bare_cpu_ms_per_emit: { server: Number(bareCpuPerEmit.toFixed(2)), clients: Number(bareClientCpuPerEmit.toFixed(2)) },
    bare_v0_change_ms: { p50: Number(bareV0Stats.p50.toFixed(2)), p99: Number(bareV0Stats.p99.toFixed(2)) },
    bare_v0_change_cpu_ms: { server: Number(bareV0CpuPerEmit.toFixed(2)), clients: Number(bareV0ClientCpuPerEmit.toFixed(2)) },
    write_syscalls_per_press: writesPerPress,
    clients_missing_an_event: missing,
  };
  if (values.json) console.log(JSON.stringify(result));
  else {
    console.log(`\nv0 push benchmark (compiled realtime x${replicas.length}, telemetry on, ${CLIENTS} WebSocket clients on one rundown, one run)`);
    console.log(`  joined in ${result.join_seconds} s`);
    console.log(`  memory per idle socket   ${result.memory_per_idle_socket_kb} KB  (RSS ${before.join('+')} KB -> ${after.join('+')} KB; goal <= 20 KB)`);
    console.log(`  action:next answer -> last client's timesnap over ${PRESSES} presses:`);
    console.log(`    p50 ${result.fanout_ms.p50} ms  p90 ${result.fanout_ms.p90} ms  p99 ${result.fanout_ms.p99} ms  max ${result.fanout_ms.max} ms  (goal p99 <= 50 ms)`);
    console.log(`    (the status event in the rundown's stream: p50 ${result.event_in_stream_ms.p50} ms  p99 ${result.event_in_stream_ms.p99} ms)`);
    console.log(`    (the timesnap broadcast published by the realtime: p50 ${result.timesnap_published_ms.p50} ms  p99 ${result.timesnap_published_ms.p99} ms)`);
    console.log(`    (the first client: p50 ${result.first_client_ms.p50} ms  p99 ${result.first_client_ms.p99} ms)`);
    console.log(`    (first -> last client, the fan-out and the clients' own receiving: p50 ${result.first_to_last_client_ms.p50} ms  p99 ${result.first_to_last_client_ms.p99} ms)`);
    console.log(`  CPU ms per press: ${cpuNames.map((name, i) => `${name} ${cpuPerPress[i]}`).join(', ')}`);
    console.log(`  write syscalls per press: realtime replicas ${writesPerPress.join(' / ')} (each serves ${CLIENTS / replicas.length} clients)`);
    console.log(`  clients that missed an event: ${missing}`);
    console.log(`  bare Socket.IO server, emit sent -> last of ${CLIENTS}: p50 ${bareStats.p50.toFixed(2)} ms  p99 ${bareStats.p99.toFixed(2)} ms  max ${bareStats.max.toFixed(2)} ms`);
    console.log(`    (CPU ms per emit: the bare server ${result.bare_cpu_ms_per_emit.server}, the ${CLIENTS} clients ${result.bare_cpu_ms_per_emit.clients})`);
    console.log(`  bare Socket.IO server, a v0 change (currentCue, nextCue, timesnap) sent -> last of ${CLIENTS}: p50 ${bareV0Stats.p50.toFixed(2)} ms  p99 ${bareV0Stats.p99.toFixed(2)} ms`);
    console.log(`    (CPU ms per change: the bare server ${result.bare_v0_change_cpu_ms.server}, the ${CLIENTS} clients ${result.bare_v0_change_cpu_ms.clients}; action:next sent -> last client p50 ${(sentStats.p50 / bareV0Stats.p50).toFixed(2)}x, p99 ${(sentStats.p99 / bareV0Stats.p99).toFixed(2)}x this)`);
    console.log(
      `  the same with the realtime service's write coalescing: p50 ${coalescedStats.p50.toFixed(2)} ms  p99 ${coalescedStats.p99.toFixed(2)} ms; server CPU ms per change ${coalescedCpuPerEmit.toFixed(2)} against ${bareV0CpuPerEmit.toFixed(2)} (gain ${coalescingGain.toFixed(1)} %)`,
    );
    console.log(`  action:next sent -> last client: p50 ${sentStats.p50.toFixed(2)} ms  p99 ${sentStats.p99.toFixed(2)} ms; p99 ratio against the bare server ${(sentStats.p99 / bareStats.p99).toFixed(2)}x`);
  }
} catch (error) {
  failed = true;
  console.error(error);
} finally {
  for (const cleanup of cleanups.reverse()) await Promise.resolve(cleanup()).catch(() => undefined);
}
process.exit(failed ? 1 : 0);
