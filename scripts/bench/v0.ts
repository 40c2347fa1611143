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
//      against the time from sending `action:next` to the last client's timesnap (the ratio).
// The launcher's own realtime replica stays in the consumer group (a third, client-less replica).
// The clients run in this process, so their own parsing is inside the measured time. To say where
// the time goes, each press is also timed at three points on the server side: the status event
// in the rundown's stream (the outbox relay's part), the `timesnap` broadcast published on the
// adapter's Redis channel (the realtime event path's part, seen by a subscriber of this bench),
// and the first client's receipt; and the CPU each realtime replica and this client process spent
// per press (load-independent, unlike the wall-clock figures on a shared machine).
//   options: --clients 1000 --presses 100 --json
//            --profile <dir>: the two replicas write a CPU profile (node --cpu-prof) into <dir> when they stop
//
// Traffic goes to loopback only; every wait is bounded.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { io, type Socket } from 'socket.io-client';
import { freePort } from '../launcher/child.js';
import { storedSecrets } from '../launcher/secrets.js';
import { summarize } from './stats.js';
import { quick, recordFigure, recordLatency } from './figures.js';
import { pidListeningOn } from '../../test/support/processes.js';
import { cpuMs, must, processFootprint, startBarePush, startBenchSystem } from './support.js';

const { values } = parseArgs({
  options: {
    clients: { type: 'string', default: quick ? '200' : '1000' },
    presses: { type: 'string', default: quick ? '30' : '100' },
    json: { type: 'boolean', default: false },
    profile: { type: 'string' },
  },
  strict: true,
});
const CLIENTS = Number(values.clients);
const PRESSES = Number(values.presses);
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
  const bareSeen: { cueId: string | null; at: number }[] = [];
  const bareSockets: Socket[] = [];
  for (let i = 0; i < CLIENTS; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, CLIENTS - i) }, (_, k) => {
        const j = i + k;
        const socket = io(bare.url, { transports: ['websocket'], reconnection: false });
        bareSeen[j] = { cueId: null, at: 0 };
        socket.on('timesnap', (snap: { cueId: string | null }) => (bareSeen[j] = { cueId: snap.cueId, at: performance.now() }));
        bareSockets.push(socket);
        return new Promise((ok, fail) => {
          socket.once('timesnap', ok);
          socket.once('connect_error', fail);
        });
      }),
    );
  }
  const bareLatencies: number[] = [];
  for (let p = 0; p < PRESSES + 5; p++) {
    const cueId = `bare-${p}`;
    const sent = performance.now();
    await (await fetch(`${bare.url}/emit`, { method: 'POST', body: JSON.stringify({ cueId }) })).text();
    for (const deadline = Date.now() + 5_000; bareSeen.some((x) => x.cueId !== cueId) && Date.now() < deadline; ) await sleep(1);
    if (p >= 5) bareLatencies.push(Math.max(...bareSeen.map((x) => x.at)) - sent);
  }
  for (const socket of bareSockets) socket.close();
  bare.child.kill('SIGTERM');
  const bareStats = summarize(bareLatencies);

  const { system, telemetry } = await startBenchSystem('rundown_bench_v0', 8, cleanups);
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
    cues: Array.from({ length: PRESSES + 2 }, (_, i) => ({ title: `Q${i}`, duration_ms: 600_000 })),
  }, 201);
  await must(`${ready.base_url}/rundowns/${rundown.id}/action:start`, 'POST', owner);

  // Warm each replica (code paths, the rundown's view), then take the idle baseline.
  const warm = replicas.map((r) => io(r.url, { path: '/api-v0/socket.io', auth: { rundownId: rundown.id, apiToken: v0Token }, transports: ['websocket'] }));
  await Promise.all(warm.map((s) => new Promise((r) => s.once('timesnap', r))));
  for (const s of warm) s.close();
  await sleep(2_000);
  const before = replicas.map((r) => processFootprint(r.child.pid!).rssKb);

  // Clients: the newest timesnap cue id each has seen, and when.
  const seen: { cueId: string | null; at: number }[] = [];
  const sockets: Socket[] = [];
  const t0 = performance.now();
  for (let i = 0; i < CLIENTS; i += 50) {
    const batch: Promise<unknown>[] = [];
    for (let j = i; j < Math.min(CLIENTS, i + 50); j++) {
      const replica = replicas[j % replicas.length]!;
      const socket = io(replica.url, { path: '/api-v0/socket.io', auth: { rundownId: rundown.id, apiToken: v0Token }, transports: ['websocket'], reconnection: false });
      seen[j] = { cueId: null, at: 0 };
      socket.on('timesnap', (snap: { cueId: string | null }) => {
        seen[j] = { cueId: snap.cueId, at: performance.now() };
      });
      sockets.push(socket);
      batch.push(
        new Promise((ok, fail) => {
          socket.once('timesnap', ok);
          socket.once('connect_error', fail);
        }),
      );
    }
    await Promise.all(batch);
  }
  cleanups.push(() => sockets.forEach((s) => s.close()));
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
      const reply = (await streamReader.xread('BLOCK', 1_000, 'STREAMS', `events:rundown:${rundown.id}`, last).catch(() => null)) as [string, [string, string[]][]][] | null;
      for (const [id] of reply?.[0]?.[1] ?? []) {
        landed.push(performance.now());
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
    if (message.includes(timesnapName)) published.push(performance.now());
  });
  await adapterTap.subscribe(`socket.io#/#rundown:${rundown.id}#`);
  await sleep(200);

  // CPU per press: the two bench replicas, the launcher's (client-less) replica, this client process.
  const launcherRealtime = (() => {
    try {
      return pidListeningOn(ready.grpc_ports.realtime!);
    } catch {
      return undefined;
    }
  })();
  const replicaCpu = () => replicas.map((r) => cpuMs(r.child.pid!)).concat(launcherRealtime ? [cpuMs(launcherRealtime)] : []);
  const cpuBefore = replicaCpu();
  const replicaWrites = () => replicas.map((r) => writeSyscalls(r.child.pid!));
  const writesBefore = replicaWrites();
  const clientCpuBefore = process.cpuUsage();

  // Presses: answer -> the last client's timesnap for the new cue.
  const streamLags: number[] = [];
  const publishLags: number[] = [];
  const spreads: number[] = [];
  const latencies: number[] = [];
  const fromSent: number[] = [];
  const firsts: number[] = [];
  let missing = 0;
  for (let p = 0; p < PRESSES; p++) {
    const landedBefore = landed.length;
    const sent = performance.now();
    const publishedBefore = published.length;
    const status = await must(`${ready.base_url}/rundowns/${rundown.id}/action:next`, 'POST', owner);
    const answered = performance.now();
    const cueId = status.active_cue.id as string;
    const deadline = Date.now() + 5_000;
    while (seen.some((s) => s.cueId !== cueId) && Date.now() < deadline) await sleep(1);
    const late = seen.filter((s) => s.cueId !== cueId).length;
    missing += late;
    latencies.push(Math.max(...seen.map((s) => s.at)) - answered);
    fromSent.push(Math.max(...seen.map((s) => s.at)) - sent);
    firsts.push(Math.min(...seen.map((s) => s.at)) - answered);
    if (landed.length > landedBefore) streamLags.push(landed[landedBefore]! - answered);
    if (published.length > publishedBefore) publishLags.push(published[publishedBefore]! - answered);
    spreads.push(Math.max(...seen.map((s) => s.at)) - Math.min(...seen.map((s) => s.at)));
  }
  const clientCpu = process.cpuUsage(clientCpuBefore);
  const cpuAfter = replicaCpu();
  const writesAfter = replicaWrites();
  const perPress = (before: number, after: number) => Number(((after - before) / PRESSES).toFixed(2));
  const replicaCpuPerPress = cpuAfter.map((after, i) => perPress(cpuBefore[i]!, after));
  const writesPerPress = writesAfter.map((after, i) => perPress(writesBefore[i]!, after));
  const clientCpuPerPress = Number(((clientCpu.user + clientCpu.system) / 1000 / PRESSES).toFixed(2));
  const s = summarize(latencies);
  const f = summarize(firsts);
  const l = summarize(streamLags);
  const sentStats = summarize(fromSent);
  recordFigure({ bench: 'v0', name: 'memory per idle Socket.IO socket (RSS)', unit: 'KB', n: CLIENTS, value: perSocketKb, goal: '<= 20' });
  recordLatency('v0', `action:next answer -> last of ${CLIENTS} sockets`, s, { goal: 'p99 <= 50' });
  recordLatency('v0', `bare Socket.IO: emit sent -> last of ${CLIENTS}`, bareStats);
  recordLatency('v0', `action:next sent -> last of ${CLIENTS} sockets`, sentStats, { baseline: 'bare Socket.IO emit (p99)', ratio: sentStats.p99 / bareStats.p99 });
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
    cpu_ms_per_press: { realtime_replicas: replicaCpuPerPress, clients: clientCpuPerPress },
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
    console.log(`  CPU ms per press: realtime replicas ${replicaCpuPerPress.join(' / ')} (bench-a / bench-b${launcherRealtime ? ' / the launcher\'s' : ''}), the ${CLIENTS} clients (this process) ${clientCpuPerPress}`);
    console.log(`  write syscalls per press: realtime replicas ${writesPerPress.join(' / ')} (each serves ${CLIENTS / replicas.length} clients)`);
    console.log(`  clients that missed an event: ${missing}`);
    console.log(`  bare Socket.IO server, emit sent -> last of ${CLIENTS}: p50 ${bareStats.p50.toFixed(2)} ms  p99 ${bareStats.p99.toFixed(2)} ms  max ${bareStats.max.toFixed(2)} ms`);
    console.log(`  action:next sent -> last client: p50 ${sentStats.p50.toFixed(2)} ms  p99 ${sentStats.p99.toFixed(2)} ms; p99 ratio against the bare server ${(sentStats.p99 / bareStats.p99).toFixed(2)}x`);
  }
} catch (error) {
  failed = true;
  console.error(error);
} finally {
  for (const cleanup of cleanups.reverse()) await Promise.resolve(cleanup()).catch(() => undefined);
}
process.exit(failed ? 1 : 0);
