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
// The launcher's own realtime replica stays in the consumer group (a third, client-less replica).
// The clients run in this process, so their own parsing is inside the measured time.
//   options: --clients 1000 --presses 100 --json
//
// Traffic goes to loopback only; every wait is bounded.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { io, type Socket } from 'socket.io-client';
import { createDatabase, isolatedRedis } from '../../test/support/infra.js';
import { freePort, freePorts, startSystem } from '../launcher/child.js';
import { storedSecrets } from '../launcher/secrets.js';
import { summarize } from './stats.js';
import { startTraceSink } from './support.js';

const { values } = parseArgs({
  options: {
    clients: { type: 'string', default: '1000' },
    presses: { type: 'string', default: '100' },
    json: { type: 'boolean', default: false },
  },
  strict: true,
});
const CLIENTS = Number(values.clients);
const PRESSES = Number(values.presses);
const root = resolve(import.meta.dirname, '../..');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const rssKb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the bench reads a few known fields of loosely typed answers
type Loose = any;
async function must(url: string, method: string, token: string, body?: unknown, expect = 200): Promise<Loose> {
  const res = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== expect) throw new Error(`${method} ${url}: ${res.status} ${text}`);
  return text ? (JSON.parse(text) as { data: unknown }).data : undefined;
}

async function startReplica(nodeId: string, env: Record<string, string>): Promise<{ url: string; child: ChildProcess }> {
  const [http, grpc] = await Promise.all([freePort(), freePort()]);
  const child = spawn(process.execPath, ['services/realtime/dist/main.js'], {
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
  console.error('building the shared library and the realtime service (tsc)...');
  const build = spawnSync('npm', ['run', 'build', '-w', '@rundown/shared', '-w', '@rundown/realtime'], { cwd: root, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('build failed');

  const sink = await startTraceSink();
  cleanups.push(() => new Promise((r) => sink.server.close(r)));
  const database = await createDatabase(process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres', 'rundown_bench_v0');
  cleanups.push(() => database.drop());
  const redisUrl = await isolatedRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', Number(process.env.BENCH_REDIS_DB ?? 8));
  const dataDir = mkdtempSync(join(tmpdir(), 'rundown-bench-v0-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const telemetry = { OTEL_SDK_DISABLED: 'false', OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_TRACES_SAMPLER_ARG: '1' };
  const system = await startSystem({
    env: { ...(await freePorts()), DATA_DIR: dataDir, DATABASE_URL: database.url, REDIS_URL: redisUrl, LOG_LEVEL: 'warn', LAUNCH_MODE: 'compiled', ...telemetry },
  });
  cleanups.push(() => system.stop());
  const { ready } = system;
  const secrets = await storedSecrets(ready.data_dir);
  const replicaEnv = {
    ...telemetry,
    OTEL_SERVICE_NAME: 'realtime',
    REDIS_URL: redisUrl,
    RUNDOWN_ADDR: `127.0.0.1:${ready.grpc_ports.rundown}`,
    RUNNER_ADDR: `127.0.0.1:${ready.grpc_ports.runner}`,
    V0_TOKEN_SECRET: secrets.V0_TOKEN_SECRET!,
    INTERNAL_CONTEXT_KEYS: secrets.INTERNAL_CONTEXT_KEYS!,
    // 1,000 connections of one team in a minute: the bench lifts the v0 budget on its replicas.
    V0_RATE_LIMIT_PER_MINUTE: '1000000',
    LOG_LEVEL: 'warn',
  };
  const replicas = await Promise.all(['bench-a', 'bench-b'].map((id) => startReplica(id, replicaEnv)));
  for (const r of replicas) cleanups.push(() => void r.child.kill('SIGTERM'));

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
  const before = replicas.map((r) => rssKb(r.child.pid!));

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
  const after = replicas.map((r) => rssKb(r.child.pid!));
  const perSocketKb = (after.reduce((a, b) => a + b, 0) - before.reduce((a, b) => a + b, 0)) / CLIENTS;

  // Where the time goes: when each event lands in the rundown's stream (the outbox relay's part).
  const streamReader = new Redis(redisUrl);
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
  await sleep(200);

  // Presses: answer -> the last client's timesnap for the new cue.
  const streamLags: number[] = [];
  const latencies: number[] = [];
  const firsts: number[] = [];
  let missing = 0;
  for (let p = 0; p < PRESSES; p++) {
    const landedBefore = landed.length;
    const status = await must(`${ready.base_url}/rundowns/${rundown.id}/action:next`, 'POST', owner);
    const answered = performance.now();
    const cueId = status.active_cue.id as string;
    const deadline = Date.now() + 5_000;
    while (seen.some((s) => s.cueId !== cueId) && Date.now() < deadline) await sleep(1);
    const late = seen.filter((s) => s.cueId !== cueId).length;
    missing += late;
    latencies.push(Math.max(...seen.map((s) => s.at)) - answered);
    firsts.push(Math.min(...seen.map((s) => s.at)) - answered);
    if (landed.length > landedBefore) streamLags.push(landed[landedBefore]! - answered);
  }
  const s = summarize(latencies);
  const f = summarize(firsts);
  const l = summarize(streamLags);
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
    first_client_ms: { p50: Number(f.p50.toFixed(2)), p99: Number(f.p99.toFixed(2)) },
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
    console.log(`    (the first client: p50 ${result.first_client_ms.p50} ms  p99 ${result.first_client_ms.p99} ms)`);
    console.log(`  clients that missed an event: ${missing}`);
  }
} catch (error) {
  failed = true;
  console.error(error);
} finally {
  for (const cleanup of cleanups.reverse()) await Promise.resolve(cleanup()).catch(() => undefined);
}
process.exit(failed ? 1 : 0);
