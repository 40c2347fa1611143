// `npm run bench:sse`: what live events cost at fan-out.
//
// Starts, on loopback: the whole system through the launcher (free ports, database rundown_bench_sse,
// Redis db BENCH_REDIS_DB, default 11), plus the gateway under test as its own process running the
// compiled JavaScript (services/gateway/dist, built by `npm run build`) with telemetry on and
// exporting every span to a sink that drops them, as deployed. Then measures, in one run:
//   1. `action:next` → `status` frame: the time from the moment the action's HTTP answer has arrived
//      to the moment the LAST of N SSE clients (one rundown) has its `status` frame of that revision,
//      over --actions sequential presses; first with 1 client (the baseline), then with --clients
//      (default 1,000). Negative values: the frame beat the answer. Goal p99 <= 50 ms at 1,000.
//   2. Memory per idle SSE connection: what the gateway retains with --clients idle streams open
//      minus what it retained before (JS heap + external after two full GCs, read over the inspector,
//      after a warm-up round of the same size), divided by N; and the same by RSS (which also counts
//      GC garbage and allocator slack). Goal <= 20 KB.
//   3. The bare push baseline (a plain Node HTTP SSE server in its own process, nothing else): the
//      time from sending `POST /emit` to the last of the same N clients receiving the frame, against
//      the time from sending `action:next` to the last client's `status` frame (the ratio).
//   4. A cue's deadline → its over-time `status` frame: --deadlines rundowns (one SSE client each), each
//      started on a single timed cue of 1-3 s; the time from the deadline (the cue's `started_at` plus its
//      duration, the server's clock, on the same machine) to the frame's arrival. Baseline: a timer the
//      bench itself sets for each deadline (what the measuring process's own event loop adds). Goal p99 <= 100 ms.
//   options: --clients 1000 --actions 100 --deadlines 60 --telemetry on|off (off: to see telemetry's share) --json
//
// Traffic goes to loopback only; every wait is bounded.
import { spawn, type ChildProcess } from 'node:child_process';
import { Agent, request, type ClientRequest } from 'node:http';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort } from '../launcher/child.js';
import { formatSummary, summarize } from './stats.js';
import { quick, recordFigure, recordLatency } from './figures.js';
import { must, processFootprint, startBarePush, startBenchSystem } from './support.js';

const { values } = parseArgs({
  options: {
    clients: { type: 'string', default: quick ? '200' : '1000' },
    actions: { type: 'string', default: quick ? '30' : '100' },
    deadlines: { type: 'string', default: quick ? '20' : '60' },
    json: { type: 'boolean', default: false },
    /** `off` measures the same without telemetry (to see its share); deployed is on. */
    telemetry: { type: 'string', default: 'on' },
  },
  strict: true,
});
const CLIENTS = Number(values.clients);
const ACTIONS = Number(values.actions);
const DEADLINES = Number(values.deadlines);
const root = resolve(import.meta.dirname, '../..');


/** The gateway under test: compiled, telemetry on, joining the launched system's services. */
async function startCompiledGateway(env: Record<string, string>): Promise<{ pid: number; baseUrl: string; inspectPort: number; child: ChildProcess }> {
  const [http, admin, grpc, inspectPort] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  // The inspector (loopback only) lets the bench force a GC and read the heap; nothing attaches otherwise.
  const child = spawn(process.execPath, [`--inspect=127.0.0.1:${inspectPort}`, 'services/gateway/dist/main.js'], {
    cwd: root,
    env: { ...process.env, ...env, HOST: '127.0.0.1', HTTP_PORT: String(http), ADMIN_PORT: String(admin), GRPC_PORT: String(grpc), PUBLIC_URL: `http://127.0.0.1:${http}`, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'inherit', 'ignore'],
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`compiled gateway exited with ${child.exitCode} (run npm run build first)`);
    const ok = await fetch(`http://127.0.0.1:${http}/readyz`).then((r) => r.status === 200, () => false);
    if (ok) break;
    if (Date.now() > deadline) throw new Error('compiled gateway not ready in 60 s');
    await new Promise((r) => setTimeout(r, 200));
  }
  return { pid: child.pid!, baseUrl: `http://127.0.0.1:${http}/v1`, inspectPort, child };
}

interface CdpSocket {
  send(data: string): void;
  close(): void;
  addEventListener(type: string, listener: (event: { data: unknown }) => void): void;
}

/**
 * The gateway's JS heap and external memory after two full GCs, read over the inspector protocol
 * (bytes): what live objects hold, without the garbage that RSS keeps counting.
 */
async function retainedBytes(inspectPort: number): Promise<{ heapUsed: number; external: number }> {
  const targets = (await (await fetch(`http://127.0.0.1:${inspectPort}/json/list`)).json()) as { webSocketDebuggerUrl: string }[];
  const WebSocketCtor = (globalThis as unknown as { WebSocket?: new (url: string) => CdpSocket }).WebSocket;
  if (!WebSocketCtor) throw new Error('run with node --experimental-websocket');
  const socket = new WebSocketCtor(targets[0]!.webSocketDebuggerUrl);
  await new Promise<void>((resolveOpen) => socket.addEventListener('open', () => resolveOpen()));
  let next = 0;
  const pending = new Map<number, (result: unknown) => void>();
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown };
    if (message.id !== undefined) pending.get(message.id)?.(message.result);
  });
  const call = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<unknown>((resolveCall) => {
      const id = ++next;
      pending.set(id, resolveCall);
      socket.send(JSON.stringify({ id, method, params }));
    });
  await call('HeapProfiler.enable');
  await call('HeapProfiler.collectGarbage');
  await call('HeapProfiler.collectGarbage');
  const evaluated = (await call('Runtime.evaluate', { expression: 'JSON.stringify(process.memoryUsage())', returnByValue: true })) as { result: { value: string } };
  await call('HeapProfiler.disable');
  socket.close();
  const usage = JSON.parse(evaluated.result.value) as { heapUsed: number; external: number };
  return { heapUsed: usage.heapUsed, external: usage.external };
}

/** A light SSE client: splits frames on blank lines and notes when each `status` revision arrived. */
class StatusFollower {
  readonly seen = new Map<number, number>();
  ready = false;
  private carry = '';
  private req: ClientRequest | undefined;
  private waiters: (() => void)[] = [];

  open(url: string, token: string, agent: Agent): Promise<void> {
    return new Promise((resolveOpen, reject) => {
      this.req = request(url, { agent, headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } }, (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          return reject(new Error(`events answered ${res.statusCode}`));
        }
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          const now = performance.now();
          const frames = (this.carry + chunk).split('\n\n');
          this.carry = frames.pop()!;
          for (const f of frames) {
            if (!f.startsWith('event:status')) continue;
            const revision = Number(/"revision":(\d+)/.exec(f)?.[1]);
            if (!this.seen.has(revision)) this.seen.set(revision, now);
            if (!this.ready) {
              this.ready = true;
              resolveOpen();
            }
          }
          for (const w of this.waiters.splice(0)) w();
        });
      });
      this.req.on('error', reject);
      this.req.end();
    });
  }

  /** When this client got a status of at least `revision` (waits for it). */
  async receivedAt(revision: number, timeoutMs = 30_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      for (const [r, at] of this.seen) if (r >= revision) return at;
      if (Date.now() > deadline) throw new Error(`no status of revision ${revision} in ${timeoutMs} ms`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, 100);
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
  }

  close(): void {
    this.req?.destroy();
  }
}

/** One SSE client of a rundown started on a single timed cue: when the second `status` frame of the start's revision (the over-time one) arrived, by the wall clock. */
function overTimeFrameAt(url: string, token: string, agent: Agent, revisionOf: Promise<number>, timeoutMs: number): { opened: Promise<void>; arrived: Promise<number>; close: () => void } {
  let req: ClientRequest | undefined;
  let opened!: () => void;
  let failOpen!: (e: Error) => void;
  const openedP = new Promise<void>((ok, fail) => ((opened = ok), (failOpen = fail)));
  const arrived = new Promise<number>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`no over-time frame in ${timeoutMs} ms`)), timeoutMs);
    const revisions: number[] = [];
    let carry = '';
    req = request(url, { agent, headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        clearTimeout(timer);
        failOpen(new Error(`events answered ${res.statusCode}`));
        return fail(new Error(`events answered ${res.statusCode}`));
      }
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        const now = Date.now();
        const frames = (carry + chunk).split('\n\n');
        carry = frames.pop()!;
        for (const f of frames) if (f.startsWith('event:status')) revisions.push(Number(/"revision":(\d+)/.exec(f)?.[1]));
        // Open once the connect snapshot is in: a start sent before it could be folded into it.
        if (revisions.length > 0) opened();
        void revisionOf.then((r) => {
          if (revisions.filter((x) => x === r).length >= 2) {
            clearTimeout(timer);
            ok(now);
          }
        });
      });
    });
    req.on('error', (e) => {
      failOpen(e);
      fail(e);
    });
    req.end();
  });
  arrived.catch(() => undefined);
  return { opened: openedP, arrived, close: () => req?.destroy() };
}

const cleanups: (() => Promise<unknown> | unknown)[] = [];
try {
  const { system, telemetry } = await startBenchSystem('rundown_bench_sse', 11, cleanups, { telemetry: values.telemetry === 'off' ? 'off' : 'on' });
  const { ready } = system;
  const gateway = await startCompiledGateway({
    ...ready.addresses,
    INTERNAL_CONTEXT_KEYS: ready.internal_context_keys,
    REDIS_URL: ready.redis_url,
    ADMIN_SECRET: ready.admin_secret,
    V0_TOKEN_SECRET: ready.v0_token_secret,
    TOKEN_ENVIRONMENT: process.env.TOKEN_ENVIRONMENT ?? 'local',
    ...telemetry,
  });
  cleanups.push(() => gateway.child.kill('SIGTERM'));

  const adminPost = async (path: string, body: unknown) => must(`${ready.admin_url}${path}`, 'POST', ready.admin_secret, body, 201);
  const team = await adminPost('/teams', { name: 'bench-sse', plan: 'paid', rate_limit_per_minute: 1_000_000 });
  const owner = (await adminPost(`/teams/${String(team.id)}/tokens`, { role: 'OWNER', ttl_seconds: 3600 })).token as string;
  const caller = (await adminPost(`/teams/${String(team.id)}/tokens`, { role: 'SHOWCALL', ttl_seconds: 3600 })).token as string;
  const viewer = (await adminPost(`/teams/${String(team.id)}/tokens`, { role: 'VIEW', ttl_seconds: 3600 })).token as string;
  const base = gateway.baseUrl;
  const newShow = async (title: string) => {
    const r = await must(`${base}/rundowns`, 'POST', owner, { title, cues: Array.from({ length: ACTIONS + 30 }, (_, j) => ({ title: `Q${j}`, duration_ms: 600_000 })) }, 201);
    await must(`${base}/rundowns/${r.id}/action:start`, 'POST', caller, undefined, 200);
    return r.id as string;
  };
  const agent = new Agent({ keepAlive: true, maxSockets: Infinity });
  const pressAgent = new Agent({ keepAlive: true, maxSockets: 1 });
  const pressOnce = (rundownId: string): Promise<{ sentAt: number; answeredAt: number; revision: number }> =>
    new Promise((ok, fail) => {
      const sentAt = performance.now();
      const req = request(`${base}/rundowns/${rundownId}/action:next`, { method: 'POST', agent: pressAgent, headers: { authorization: `Bearer ${caller}` } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          const answeredAt = performance.now();
          if (res.statusCode !== 200) return fail(new Error(`action:next ${res.statusCode} ${text.slice(0, 200)}`));
          ok({ sentAt, answeredAt, revision: (JSON.parse(text) as { data: { revision: number } }).data.revision });
        });
      });
      req.on('error', fail);
      req.end();
    });

  // The machine is shared: a transient refusal (Redis slow to answer the revocation check) is retried, as the spec asks of clients.
  const press = async (rundownId: string) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await pressOnce(rundownId);
      } catch (error) {
        if (attempt >= 5 || !/revocation_check_unavailable|service_unavailable/.test((error as Error).message)) throw error;
        await new Promise((r) => setTimeout(r, 200 * attempt));
      }
    }
  };

  // As with the presses: a refusal the spec says to retry (401 while the revocation check is unavailable, 503) is retried.
  const openRetrying = async (f: StatusFollower, url: string) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await f.open(url, viewer, agent);
      } catch (error) {
        if (attempt >= 5 || !/answered (401|503)/.test((error as Error).message)) throw error;
        await new Promise((r) => setTimeout(r, 200 * attempt));
      }
    }
  };

  const openFollowers = async (rundownId: string, n: number) => {
    const followers = Array.from({ length: n }, () => new StatusFollower());
    // In waves, as a room of displays would connect.
    for (let i = 0; i < n; i += 100) {
      await Promise.all(followers.slice(i, i + 100).map((f) => openRetrying(f, `${base}/rundowns/${rundownId}/events?events=`)));
    }
    return followers;
  };

  /** Per action: answer → last client's frame, and answer → first client's frame (the spread between them is the fan-out). */
  const measure = async (rundownId: string, followers: StatusFollower[], actions: number) => {
    const samples: number[] = [];
    const firsts: number[] = [];
    const fromSent: number[] = [];
    for (let i = 0; i < actions; i++) {
      const { sentAt, answeredAt, revision } = await press(rundownId);
      const arrivals = await Promise.all(followers.map((f) => f.receivedAt(revision)));
      samples.push(Math.max(...arrivals) - answeredAt);
      firsts.push(Math.min(...arrivals) - answeredAt);
      fromSent.push(Math.max(...arrivals) - sentAt);
      await new Promise((r) => setTimeout(r, 20));
    }
    Object.assign(samples, { firsts, fromSent });
    return samples as number[] & { firsts?: number[]; fromSent?: number[] };
  };

  // The bare push baseline: the same N clients on a plain SSE server, `POST /emit` sent -> the last frame.
  const bare = await startBarePush();
  cleanups.push(() => bare.child.kill('SIGTERM'));
  const bareFollowers = Array.from({ length: CLIENTS }, () => new StatusFollower());
  for (let i = 0; i < CLIENTS; i += 100) await Promise.all(bareFollowers.slice(i, i + 100).map((f) => f.open(`${bare.url}/events`, viewer, agent)));
  const bareSamples: number[] = [];
  for (let i = 1; i <= ACTIONS + 5; i++) {
    const sentAt = performance.now();
    const res = await fetch(`${bare.url}/emit`, { method: 'POST', body: JSON.stringify({ revision: i }) });
    await res.text();
    const arrivals = await Promise.all(bareFollowers.map((f) => f.receivedAt(i)));
    if (i > 5) bareSamples.push(Math.max(...arrivals) - sentAt);
    await new Promise((r) => setTimeout(r, 20));
  }
  for (const f of bareFollowers) f.close();
  bare.child.kill('SIGTERM');

  // Baseline: one client.
  const soloShow = await newShow('solo');
  const solo = await openFollowers(soloShow, 1);
  await measure(soloShow, solo, 5);
  const soloSamples = await measure(soloShow, solo, ACTIONS);
  for (const f of solo) f.close();

  // Memory: a warm-up round of N streams opened and closed, then N idle streams.
  const roomShow = await newShow('room');
  const warm = await openFollowers(roomShow, CLIENTS);
  for (const f of warm) f.close();
  await new Promise((r) => setTimeout(r, 3_000));
  const rssBefore = processFootprint(gateway.pid).rssKb;
  const heapBefore = await retainedBytes(gateway.inspectPort);
  const room = await openFollowers(roomShow, CLIENTS);
  await new Promise((r) => setTimeout(r, 3_000));
  const rssIdle = processFootprint(gateway.pid).rssKb;
  const heapIdle = await retainedBytes(gateway.inspectPort);
  await new Promise((r) => setTimeout(r, 2_000)); // let the gateway settle after the full GCs
  const perConnectionKb = (rssIdle - rssBefore) / CLIENTS;
  const retainedPerConnectionKb = (heapIdle.heapUsed + heapIdle.external - heapBefore.heapUsed - heapBefore.external) / 1024 / CLIENTS;

  // Fan-out: N clients on one rundown.
  await measure(roomShow, room, 5);
  const roomSamples = await measure(roomShow, room, ACTIONS);
  for (const f of room) f.close();

  // Deadlines: one client per rundown, each started on a single timed cue; deadline -> over-time frame.
  const deadlineShows = await Promise.all(
    Array.from({ length: DEADLINES }, async (_, i) => {
      const durationMs = 1_000 + Math.floor(Math.random() * 2_000);
      const r = await must(`${base}/rundowns`, 'POST', owner, { title: `deadline ${i}`, cues: [{ title: 'Timed', duration_ms: durationMs }, { title: 'After', duration_ms: 60_000 }] }, 201);
      return { id: r.id as string, durationMs };
    }),
  );
  const overTimeLate: number[] = [];
  const timerLate: number[] = [];
  await Promise.all(
    deadlineShows.map(async (show, i) => {
      let revision!: (r: number) => void;
      const revisionOf = new Promise<number>((ok) => (revision = ok));
      const follower = overTimeFrameAt(`${base}/rundowns/${show.id}/events?events=`, viewer, agent, revisionOf, 30_000);
      await follower.opened;
      await new Promise((r) => setTimeout(r, (i / DEADLINES) * 1_000));
      const started = await must(`${base}/rundowns/${show.id}/action:start`, 'POST', caller, undefined, 200);
      revision(started.revision as number);
      const due = (started.active_cue as { started_at: number }).started_at + show.durationMs;
      timerLate.push(await new Promise<number>((ok) => setTimeout(() => ok(Date.now() - due), due - Date.now())));
      overTimeLate.push((await follower.arrived) - due);
      follower.close();
    }),
  );
  agent.destroy();
  pressAgent.destroy();

  const soloStats = summarize(soloSamples);
  const roomStats = summarize(roomSamples);
  const roomFirstStats = summarize(roomSamples.firsts ?? []);
  const roomSentStats = summarize(roomSamples.fromSent ?? []);
  const bareStats = summarize(bareSamples);
  const overTimeStats = summarize(overTimeLate);
  const timerStats = summarize(timerLate);
  recordLatency('sse', 'action:next answer -> 1 client frame', soloStats);
  recordLatency('sse', `action:next answer -> last of ${CLIENTS} clients`, roomStats, { baseline: '1 client', ratio: roomStats.p99 / soloStats.p99, goal: 'p99 <= 50' });
  recordLatency('sse', `bare SSE: emit sent -> last of ${CLIENTS} clients`, bareStats);
  recordLatency('sse', `action:next sent -> last of ${CLIENTS} clients`, roomSentStats, { baseline: 'bare SSE emit (p99)', ratio: roomSentStats.p99 / bareStats.p99 });
  recordLatency('sse', 'bare timer at the deadline (the bench process)', timerStats);
  recordLatency('sse', `cue deadline -> over-time status frame (${DEADLINES} rundowns)`, overTimeStats, { baseline: 'bare timer (p99)', ratio: overTimeStats.p99 / Math.max(1, timerStats.p99), goal: 'p99 <= 100' });
  recordFigure({ bench: 'sse', name: 'memory per idle SSE connection, retained', unit: 'KB', n: CLIENTS, value: retainedPerConnectionKb, goal: '<= 20' });
  recordFigure({ bench: 'sse', name: 'memory per idle SSE connection, RSS', unit: 'KB', n: CLIENTS, value: perConnectionKb });
  const result = {
    clients: CLIENTS,
    actions: ACTIONS,
    telemetry: values.telemetry,
    baseline_1_client: soloStats,
    fan_out: roomStats,
    fan_out_first_client: roomFirstStats,
    ratio_p99: roomStats.p99 / soloStats.p99,
    deadline_to_over_time_frame: overTimeStats,
    bare_timer_lateness: timerStats,
    memory: { rss_before_kb: rssBefore, rss_idle_kb: rssIdle, rss_per_connection_kb: perConnectionKb, retained_per_connection_kb: retainedPerConnectionKb, heap_before: heapBefore, heap_idle: heapIdle },
  };
  if (values.json) process.stdout.write(`${JSON.stringify(result)}\n`);
  else {
    console.log(`SSE benchmark: compiled gateway (pid ${gateway.pid}), telemetry ${values.telemetry}; action:next answer → last client's status frame`);
    console.log(formatSummary('1 client (baseline)', soloStats));
    console.log(formatSummary(`${CLIENTS} clients, one rundown`, roomStats));
    console.log(formatSummary(`  (first of the ${CLIENTS})`, roomFirstStats));
    console.log(`ratio p99 ${CLIENTS}/1: ${result.ratio_p99.toFixed(2)}x (goal: p99 <= 50 ms at ${CLIENTS})`);
    console.log(formatSummary(`bare SSE, emit sent -> last of ${CLIENTS}`, bareStats));
    console.log(formatSummary(`action:next sent -> last of ${CLIENTS}`, roomSentStats));
    console.log(`ratio p99 against the bare SSE server (same clients, same run): ${(roomSentStats.p99 / bareStats.p99).toFixed(2)}x`);
    console.log(formatSummary(`cue deadline -> over-time status frame (${DEADLINES} rundowns)`, overTimeStats) + '   goal p99 <= 100 ms');
    console.log(formatSummary('  baseline: a timer of the bench process at each deadline', timerStats));
    console.log(
      `memory per idle SSE connection: ${retainedPerConnectionKb.toFixed(1)} KB retained (JS heap + external after full GC, ${((heapBefore.heapUsed + heapBefore.external) / 1048576).toFixed(1)} MB → ${((heapIdle.heapUsed + heapIdle.external) / 1048576).toFixed(1)} MB); goal <= 20 KB`,
    );
    console.log(
      `  RSS (GC garbage and allocator slack included): ${perConnectionKb.toFixed(1)} KB per connection (${(rssBefore / 1024).toFixed(1)} MB → ${(rssIdle / 1024).toFixed(1)} MB with ${CLIENTS} idle streams)`,
    );
  }
} finally {
  for (const c of cleanups.reverse()) await Promise.resolve(c()).catch(() => undefined);
}
