// `npm run soak`: an hour (SOAK_MINUTES) of steady mixed load on the whole system, started through the
// launcher as `npm start` does (compiled services, telemetry on and exported to a local sink), printing
// every process's memory and open file descriptors each SOAK_SAMPLE_SECONDS; fails if any grows
// without bound, if a service restarts, or if more than 1% of requests fail.
//
// Load, at SOAK_RATE operations per second (default 20), spread over 5 rundowns of 200 cues x 5 columns:
//   35% content writes (cells:bulk of 10, each with an Idempotency-Key; every tenth one re-sent with the
//       same key, as a client retrying), 15% cue edits (PATCH title and duration), 20% show actions
//       (next / previous, a random walk), 30% status reads; plus SSE streams and v0 Socket.IO clients
//       (through the gateway) that connect, stay 5-30 s and leave, about SOAK_STREAMS (default 20) of each.
// "Grows without bound" (scripts/bench/growth.ts): after SOAK_WARMUP_MINUTES (default a fifth of the
// run, at most 5), over the second half of the remaining samples, the least-squares slope is above
// SOAK_MAX_RSS_MB_PER_HOUR (default 50) for RSS or SOAK_MAX_FDS_PER_HOUR (default 30) for fds, AND the
// last sample is above every sample of the first half. Heap is read where it can be (this process);
// the services' heap is not exposed, so RSS stands for it.
//
// Traffic goes to loopback only; the run stops by itself. Redis db BENCH_REDIS_DB (default 15).
import { randomUUID } from 'node:crypto';
import { Agent, request, type ClientRequest } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { io, type Socket } from 'socket.io-client';
import { growthVerdict, type Point } from './bench/growth.js';
import { summarize } from './bench/stats.js';
import { processFootprint, servicePids, startBenchSystem } from './bench/support.js';

const num = (name: string, fallback: number) => {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number (got ${raw})`);
  return value;
};
const MINUTES = num('SOAK_MINUTES', 60);
const SAMPLE_SECONDS = num('SOAK_SAMPLE_SECONDS', 60);
const RATE = num('SOAK_RATE', 20);
const STREAMS = num('SOAK_STREAMS', 20);
const WARMUP_MINUTES = num('SOAK_WARMUP_MINUTES', Math.min(5, MINUTES / 5));
const MAX_RSS_MB_PER_HOUR = num('SOAK_MAX_RSS_MB_PER_HOUR', 50);
const MAX_FDS_PER_HOUR = num('SOAK_MAX_FDS_PER_HOUR', 30);
const MAX_IN_FLIGHT = 64;
const RUNDOWNS = 5;
const CUES = 200;
const COLUMNS = 5;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pick = <T>(items: T[]): T => items[Math.floor(Math.random() * items.length)]!;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the soak reads a few known fields of loosely typed answers
type Loose = any;

const agent = new Agent({ keepAlive: true, maxSockets: MAX_IN_FLIGHT });
/** One HTTP call; resolves with the status and the body's `data` (never rejects: a network error is status 0). */
function call(url: string, method: string, token: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; data: Loose; text: string }> {
  return new Promise((resolveCall) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      url,
      { method, agent, headers: { authorization: `Bearer ${token}`, ...(payload ? { 'content-type': 'application/json' } : {}), ...headers }, timeout: 30_000 },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          let data: Loose;
          try {
            data = text ? (JSON.parse(text) as { data: unknown }).data : undefined;
          } catch {
            data = undefined;
          }
          resolveCall({ status: res.statusCode ?? 0, data, text });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (error) => resolveCall({ status: 0, data: undefined, text: String(error) }));
    req.end(payload);
  });
}

async function must(url: string, method: string, token: string, body: unknown, expect: number): Promise<Loose> {
  const res = await call(url, method, token, body);
  if (res.status !== expect) throw new Error(`${method} ${url}: ${res.status} ${res.text.slice(0, 300)}`);
  return res.data;
}

/** Per operation kind, in the current sample interval and in total. */
class Tally {
  latencies: number[] = [];
  ok = 0;
  failed = 0;
  totalOk = 0;
  totalFailed = 0;
  lastFailure = '';
  add(ms: number, ok: boolean, failure = '') {
    this.latencies.push(ms);
    if (ok) {
      this.ok++;
      this.totalOk++;
    } else {
      this.failed++;
      this.totalFailed++;
      this.lastFailure = failure;
    }
  }
  reset() {
    this.latencies = [];
    this.ok = 0;
    this.failed = 0;
  }
}

const cleanups: (() => Promise<unknown> | unknown)[] = [];
let exitCode = 0;
try {
  console.log(`soak: ${MINUTES} min at ${RATE} ops/s, ~${STREAMS} SSE + ~${STREAMS} Socket.IO clients coming and going; sample every ${SAMPLE_SECONDS} s; warm-up ${WARMUP_MINUTES} min`);
  const { system } = await startBenchSystem('rundown_soak', 15, cleanups, {
    // Clients reconnect all hour long: the soak lifts the v0 connection budget, as the v0 bench does.
    env: { V0_RATE_LIMIT_PER_MINUTE: '1000000' },
    // The services' warnings and errors (LOG_LEVEL warn) go to this output: a crash says why.
    verbose: true,
  });
  const { ready } = system;
  const base = ready.base_url;
  const processes = new Map<string, number>([['launcher', ready.pid], ...servicePids(ready.pid), ['soak (this)', process.pid]]);
  console.log(`processes: ${[...processes].map(([n, p]) => `${n} ${p}`).join(', ')}`);

  const adminPost = (path: string, body: unknown) => must(`${ready.admin_url}${path}`, 'POST', ready.admin_secret, body, 201);
  const team = await adminPost('/teams', { name: 'soak', plan: 'paid', rate_limit_per_minute: 1_000_000, max_rundowns: 1_000 });
  const owner = (await adminPost(`/teams/${team.id}/tokens`, { role: 'OWNER', ttl_seconds: 6 * 3600 + MINUTES * 60 })).token as string;
  const caller = (await adminPost(`/teams/${team.id}/tokens`, { role: 'SHOWCALL', ttl_seconds: 6 * 3600 + MINUTES * 60 })).token as string;
  const viewer = (await adminPost(`/teams/${team.id}/tokens`, { role: 'VIEW', ttl_seconds: 6 * 3600 + MINUTES * 60 })).token as string;
  const v0Token = (await adminPost(`/teams/${team.id}/v0-token`, {})).token as string;
  const shows: { id: string; cues: string[]; columns: string[] }[] = [];
  for (let i = 0; i < RUNDOWNS; i++) {
    const r = await must(`${base}/rundowns`, 'POST', owner, {
      title: `soak ${i}`,
      columns: Array.from({ length: COLUMNS }, (_, c) => ({ name: `col ${c}` })),
      cues: Array.from({ length: CUES }, (_, j) => ({ title: `Q${j}`, duration_ms: 600_000 })),
    }, 201);
    const cues = await must(`${base}/rundowns/${r.id}/cues`, 'GET', owner, undefined, 200);
    await must(`${base}/rundowns/${r.id}/action:start`, 'POST', caller, undefined, 200);
    shows.push({ id: r.id as string, cues: (cues.items as { id: string }[]).map((c) => c.id), columns: r.column_order as string[] });
  }

  const tallies = { write: new Tally(), 'write retry': new Tally(), 'cue edit': new Tally(), action: new Tally(), 'status read': new Tally(), 'sse open': new Tally(), 'socket open': new Tally() };
  type Kind = keyof typeof tallies;
  const timed = async (kind: Kind, work: () => Promise<{ status: number; text: string }>, ok: (status: number, text: string) => boolean) => {
    const t0 = performance.now();
    const res = await work();
    tallies[kind].add(performance.now() - t0, ok(res.status, res.text), `${res.status} ${res.text.slice(0, 160)}`);
  };
  const recentKeys: { key: string; show: string; items: unknown[] }[] = [];
  let writes = 0;

  const operations: [number, () => Promise<void>][] = [
    [
      35,
      async () => {
        const show = pick(shows);
        writes++;
        if (writes % 10 === 0 && recentKeys.length) {
          // A client retrying a write it already made: same key, same body, answered from the record.
          const again = pick(recentKeys);
          await timed('write retry', () => call(`${base}/rundowns/${again.show}/cells:bulk`, 'POST', owner, { items: again.items }, { 'idempotency-key': again.key }), (s, text) => s === 200 || (s === 409 && text.includes('idempotency.in_flight')));
          return;
        }
        const cue0 = Math.floor(Math.random() * (CUES - 2));
        const items = Array.from({ length: 10 }, (_, k) => ({
          cue_id: show.cues[cue0 + (k % 2)]!,
          column_id: show.columns[Math.floor(k / 2)]!,
          content_html: `<p><strong>take ${writes}</strong> cell ${k} <em>${randomUUID()}</em></p>`,
        }));
        const key = randomUUID();
        recentKeys.push({ key, show: show.id, items });
        if (recentKeys.length > 50) recentKeys.shift();
        await timed('write', () => call(`${base}/rundowns/${show.id}/cells:bulk`, 'POST', owner, { items }, { 'idempotency-key': key }), (s) => s === 200);
      },
    ],
    [
      15,
      async () => {
        const show = pick(shows);
        const cue = pick(show.cues);
        await timed('cue edit', () => call(`${base}/rundowns/${show.id}/cues/${cue}`, 'PATCH', owner, { title: `edited ${randomUUID().slice(0, 8)}`, duration_ms: 60_000 + Math.floor(Math.random() * 600_000) }), (s) => s === 200);
      },
    ],
    [
      20,
      async () => {
        const show = pick(shows);
        const verb = Math.random() < 0.55 ? 'next' : 'previous';
        // 409 at either end of the show is the documented answer, not a failure.
        await timed('action', () => call(`${base}/rundowns/${show.id}/action:${verb}`, 'POST', caller), (s, text) => s === 200 || (s === 409 && /no_(next|previous)_cue/.test(text)));
      },
    ],
    [30, async () => void (await timed('status read', () => call(`${base}/rundowns/${pick(shows).id}/status`, 'GET', viewer), (s) => s === 200))],
  ];
  const totalWeight = operations.reduce((a, [w]) => a + w, 0);
  const chooseOperation = () => {
    let r = Math.random() * totalWeight;
    for (const [w, op] of operations) if ((r -= w) < 0) return op;
    return operations[0]![1];
  };

  // Streams and sockets: each lives 5-30 s, then leaves and is replaced.
  const streamAgent = new Agent({ keepAlive: false });
  const liveStreams = new Set<ClientRequest>();
  const liveSockets = new Set<Socket>();
  const openStream = () => {
    const show = pick(shows);
    const t0 = performance.now();
    const req = request(`${base}/rundowns/${show.id}/events`, { agent: streamAgent, headers: { authorization: `Bearer ${viewer}`, accept: 'text/event-stream' } }, (res) => {
      tallies['sse open'].add(performance.now() - t0, res.statusCode === 200, `${res.statusCode}`);
      res.resume();
    });
    req.on('error', () => undefined);
    req.end();
    liveStreams.add(req);
    setTimeout(() => {
      req.destroy();
      liveStreams.delete(req);
    }, 5_000 + Math.random() * 25_000).unref();
  };
  const openSocket = () => {
    const show = pick(shows);
    const t0 = performance.now();
    const socket = io(ready.public_url, { path: '/api-v0/socket.io', auth: { rundownId: show.id, apiToken: v0Token }, transports: ['websocket'], reconnection: false });
    let settled = false;
    const settle = (ok: boolean, why: string) => {
      if (settled) return;
      settled = true;
      tallies['socket open'].add(performance.now() - t0, ok, why);
    };
    socket.once('serverTime', () => settle(true, '')); // all a client is sent at connect
    socket.once('connect_error', (error: Error) => settle(false, error.message));
    liveSockets.add(socket);
    setTimeout(() => {
      settle(false, 'no serverTime before leaving');
      socket.close();
      liveSockets.delete(socket);
    }, 5_000 + Math.random() * 25_000).unref();
  };

  // Sampling.
  const series = new Map<string, { rss: Point[]; fds: Point[] }>([...processes.keys()].map((name) => [name, { rss: [], fds: [] }]));
  const restarts: string[] = [];
  const started = Date.now();
  const seconds = () => (Date.now() - started) / 1000;
  const sample = () => {
    const t = seconds();
    const now = servicePids(ready.pid);
    for (const [name, pid] of now) {
      if (processes.has(name) && processes.get(name) !== pid) {
        restarts.push(`${name} ${processes.get(name)} -> ${pid} at ${(t / 60).toFixed(1)} min`);
        processes.set(name, pid);
      }
    }
    const rows: string[] = [];
    for (const [name, pid] of processes) {
      const { rssKb, fds } = processFootprint(pid);
      const s = series.get(name)!;
      s.rss.push({ t, value: rssKb / 1024 });
      s.fds.push({ t, value: fds });
      const heap = pid === process.pid ? `${(process.memoryUsage().heapUsed / 2 ** 20).toFixed(1)}` : '-';
      rows.push(`  ${name.padEnd(12)} ${String(pid).padStart(7)} ${(rssKb / 1024).toFixed(1).padStart(8)} ${heap.padStart(8)} ${String(fds).padStart(5)}`);
    }
    const ops = Object.entries(tallies)
      .filter(([, tally]) => tally.latencies.length)
      .map(([kind, tally]) => `${kind} ${tally.ok}/${tally.ok + tally.failed} p99 ${summarize(tally.latencies).p99.toFixed(0)} ms`)
      .join('; ');
    console.log(
      `\n[${new Date().toISOString().slice(11, 19)}] t=${(t / 60).toFixed(1)} min  load ${loadavg().map((l) => l.toFixed(2)).join(' ')}  streams ${liveStreams.size} sockets ${liveSockets.size}`,
    );
    console.log(`  ${'process'.padEnd(12)} ${'pid'.padStart(7)} ${'RSS MB'.padStart(8)} ${'heap MB'.padStart(8)} ${'fds'.padStart(5)}`);
    for (const row of rows) console.log(row);
    console.log(`  ops (ok/all, this interval): ${ops || 'none yet'}`);
    for (const tally of Object.values(tallies)) tally.reset();
  };

  sample();
  const endAt = started + MINUTES * 60_000;
  let inFlight = 0;
  let skipped = 0;
  const interval = 1000 / RATE;
  let nextSample = started + SAMPLE_SECONDS * 1000;
  let nextTick = performance.now();
  while (Date.now() < endAt) {
    // Steady rate: operations start on a fixed schedule whatever their latency; beyond the in-flight cap they are skipped (and counted).
    if (inFlight < MAX_IN_FLIGHT) {
      inFlight++;
      void chooseOperation()().finally(() => inFlight--);
    } else skipped++;
    if (liveStreams.size < STREAMS && Math.random() < 0.2) openStream();
    if (liveSockets.size < STREAMS && Math.random() < 0.2) openSocket();
    if (Date.now() >= nextSample) {
      sample();
      nextSample += SAMPLE_SECONDS * 1000;
    }
    nextTick += interval;
    await sleep(Math.max(0, nextTick - performance.now()));
  }
  // Drain, let the clients go, and take the last sample.
  for (const deadline = Date.now() + 30_000; inFlight > 0 && Date.now() < deadline; ) await sleep(100);
  // The verdict is over the samples under load; the one after the clients have left is printed, not judged.
  const underLoad = new Map([...series].map(([name, s]) => [name, { rss: [...s.rss], fds: [...s.fds] }]));
  for (const req of liveStreams) req.destroy();
  for (const socket of liveSockets) socket.close();
  liveStreams.clear();
  liveSockets.clear();
  await sleep(3_000);
  console.log('\nafter the load stopped and every client left:');
  sample();
  streamAgent.destroy();

  // Verdict.
  const warmupSeconds = WARMUP_MINUTES * 60;
  console.log(`\nsoak verdict (warm-up ${WARMUP_MINUTES} min; limits ${MAX_RSS_MB_PER_HOUR} MB/h RSS, ${MAX_FDS_PER_HOUR} fds/h; grows = slope over the second half above the limit AND still setting new highs)`);
  console.log(`  ${'process'.padEnd(12)} ${'RSS first→last MB'.padStart(20)} ${'slope MB/h'.padStart(11)} ${'fds first→last'.padStart(15)} ${'slope fds/h'.padStart(12)}  verdict`);
  const failures: string[] = [];
  for (const [name, s] of underLoad) {
    const rss = growthVerdict(s.rss, warmupSeconds, MAX_RSS_MB_PER_HOUR);
    const fds = growthVerdict(s.fds, warmupSeconds, MAX_FDS_PER_HOUR);
    const verdict = rss.undecided ? 'too few samples' : rss.grows || fds.grows ? `GROWS (${[rss.grows && 'RSS', fds.grows && 'fds'].filter(Boolean).join(', ')})` : 'bounded';
    if (rss.grows || fds.grows) failures.push(`${name}: ${verdict}`);
    const span = (p: Point[]) => `${p[0]?.value.toFixed(0)} → ${p.at(-1)?.value.toFixed(0)}`;
    console.log(
      `  ${name.padEnd(12)} ${span(s.rss).padStart(20)} ${rss.slopePerHour.toFixed(1).padStart(11)} ${span(s.fds).padStart(15)} ${fds.slopePerHour.toFixed(1).padStart(12)}  ${verdict}`,
    );
  }
  const ok = Object.values(tallies).reduce((a, t) => a + t.totalOk, 0);
  const failed = Object.values(tallies).reduce((a, t) => a + t.totalFailed, 0);
  console.log(`\nrequests and connections: ${ok + failed}, failed ${failed} (${((failed / Math.max(1, ok + failed)) * 100).toFixed(2)}%), skipped at the in-flight cap ${skipped}`);
  for (const [kind, t] of Object.entries(tallies)) {
    if (t.totalFailed) console.log(`  ${kind}: ${t.totalFailed} failed, last: ${t.lastFailure}`);
  }
  console.log(`machine: ${cpus().length} cores, load ${loadavg().map((l) => l.toFixed(2)).join(' ')}, Node ${process.version}`);
  if (restarts.length) failures.push(`service restarts: ${restarts.join(', ')}`);
  if (failed > 0.01 * (ok + failed)) failures.push(`${failed} of ${ok + failed} operations failed (more than 1%)`);
  if (failures.length) {
    console.log(`\nSOAK FAILED:\n  ${failures.join('\n  ')}`);
    exitCode = 1;
  } else console.log('\nSOAK PASSED: memory and file descriptors of every process stayed bounded; no restart; failures under 1%');
} catch (error) {
  console.error(error);
  exitCode = 1;
} finally {
  agent.destroy();
  for (const cleanup of cleanups.reverse()) await Promise.resolve(cleanup()).catch(() => undefined);
}
process.exit(exitCode);
