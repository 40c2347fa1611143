import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createParser } from 'eventsource-parser';
import { io, type Socket } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../../scripts/launcher/build.js';
import { call } from '../support/client.js';
import { createDatabase, isolatedRedis, startInfra, type TestInfra } from '../support/infra.js';
import { startReplicated, type Replica, type ReplicatedSystem } from '../support/replicas.js';

// Graceful shutdown, proven under steady load (issue 12): two replicas of every service, as a
// Deployment with `replicas: 2` runs them. One replica of each service in turn gets SIGTERM while
// clients keep calling through a small balancer that, like an ingress or Kubernetes' endpoints,
// sends only to gateways whose /readyz answers 200. Every request must succeed (no 5xx, no reset),
// every deadline job placed around the runner's shutdown must fire, the gateway's SSE streams
// must end with `disconnect`, and Socket.IO clients must reconnect by themselves.

const DELAY_MS = 1_000; // SHUTDOWN_DELAY_MS: not ready, still serving
const GRACE_MS = 15_000; // SHUTDOWN_GRACE_MS
const WORKERS = 8;

let infra: TestInfra;
let database: Awaited<ReturnType<typeof createDatabase>>;
let system: ReplicatedSystem;
const dataDir = mkdtempSync(join(tmpdir(), 'rundown-shutdown-'));

beforeAll(async () => {
  await ensureBuilt();
  infra = await startInfra();
  database = await createDatabase(infra.postgresServerUrl, 'rundown_shutdown');
  // A Redis db of its own: the timer queue must not be shared with another system's runners.
  const redisUrl = await isolatedRedis(infra.redisUrl, Number(process.env.E2E_SHUTDOWN_REDIS_DB ?? 12));
  system = await startReplicated({
    count: 2,
    databaseUrl: database.url,
    redisUrl,
    dataDir,
    env: { LOG_LEVEL: 'info', SHUTDOWN_DELAY_MS: String(DELAY_MS), SHUTDOWN_GRACE_MS: String(GRACE_MS), OTEL_METRICS_EXPORTER: 'none' },
  });
}, 600_000);

afterAll(async () => {
  await system?.stop();
  await database?.drop().catch(() => undefined);
  rmSync(dataDir, { recursive: true, force: true });
  await infra?.stop();
}, 60_000);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The balancer: gateways by readiness, polled every 100 ms (a readiness probe with a short period). */
class Balancer {
  private readonly ready = new Map<Replica, boolean>();
  private next = 0;
  private timer: NodeJS.Timeout | undefined;
  constructor(private readonly gateways: Replica[]) {
    for (const g of gateways) this.ready.set(g, true);
  }
  start(): void {
    this.timer = setInterval(() => {
      for (const g of this.gateways) {
        // A slow answer (a loaded machine) keeps the last verdict; a 503 or a refused connection does not.
        fetch(`${g.url}/readyz`, { signal: AbortSignal.timeout(2_000) }).then(
          (res) => {
            void res.body?.cancel();
            this.ready.set(g, res.status === 200);
          },
          (error: Error) => {
            if (error.name !== 'TimeoutError') this.ready.set(g, false);
          },
        );
      }
    }, 100);
  }
  stop(): void {
    clearInterval(this.timer);
  }
  async pick(): Promise<Replica> {
    for (let waited = 0; ; waited += 50) {
      const live = this.gateways.filter((g) => this.ready.get(g));
      if (live.length > 0) return live[this.next++ % live.length]!;
      if (waited > 10_000) throw new Error('no gateway is ready');
      await sleep(50);
    }
  }
}

interface Outcome {
  op: string;
  gateway: number;
  started: number;
  ended: number;
  ok: boolean;
  detail?: string;
}

describe('SIGTERM under steady load, one replica of each service in turn', () => {
  it('fails no request, loses no job, ends SSE streams with disconnect and reconnects Socket.IO clients', async () => {
    const gatewayA = system.of('gateway', 0);
    const adminSecret = system.secrets.ADMIN_SECRET;
    const team = await call(`${gatewayA.adminUrl}/teams`, 'POST', {
      token: adminSecret,
      body: { name: 'drain', plan: 'paid', rate_limit_per_minute: 1_000_000 },
    });
    expect(team.status, team.text).toBe(201);
    const teamId = team.body.data.id as string;
    const minted = await call(`${gatewayA.adminUrl}/teams/${teamId}/tokens`, 'POST', { token: adminSecret, body: { role: 'OWNER' } });
    const token = minted.body.data.token as string;
    const v1 = (g: Replica, method: string, path: string, body?: unknown) =>
      call(`${g.url}/v1${path}`, method, { token, ...(body !== undefined ? { body } : {}) });

    // Rundowns to work on; shows running on long cues (jumps between them keep the runner busy).
    const rundowns: string[] = [];
    const shows: { id: string; cues: string[] }[] = [];
    for (let i = 0; i < 4; i++) {
      const created = await v1(gatewayA, 'POST', '/rundowns', { title: `steady ${i}`, cues: [{ title: 'one' }, { title: 'two' }] });
      expect(created.status, created.text).toBe(201);
      rundowns.push(created.body.data.id);
      const show = await v1(gatewayA, 'POST', '/rundowns', {
        title: `show ${i}`,
        cues: [
          { title: 'a', duration_ms: 600_000 },
          { title: 'b', duration_ms: 600_000 },
        ],
      });
      const cues = await v1(gatewayA, 'GET', `/rundowns/${show.body.data.id}/cues`);
      shows.push({ id: show.body.data.id, cues: cues.body.data.items.map((c: { id: string }) => c.id) });
      expect((await v1(gatewayA, 'POST', `/rundowns/${show.body.data.id}/action:start`)).status).toBe(200);
    }

    // The steady load: every service on the path of some request.
    const balancer = new Balancer([gatewayA, system.of('gateway', 1)]);
    balancer.start();
    const outcomes: Outcome[] = [];
    let running = true;
    let n = 0;
    const ops: { name: string; expect: number; run: (g: Replica, i: number) => Promise<{ status: number; text: string }> }[] = [
      { name: 'get rundown (rundown)', expect: 200, run: (g, i) => v1(g, 'GET', `/rundowns/${rundowns[i % 4]}`) },
      { name: 'add cue (rundown, outbox)', expect: 201, run: (g, i) => v1(g, 'POST', `/rundowns/${rundowns[i % 4]}/cues`, { title: `cue ${i}` }) },
      { name: 'list cells (cells)', expect: 200, run: (g, i) => v1(g, 'GET', `/rundowns/${rundowns[i % 4]}/cells`) },
      {
        name: 'jump (runner)',
        expect: 200,
        run: (g, i) => {
          const show = shows[i % 4]!;
          return v1(g, 'POST', `/rundowns/${show.id}/action:jump`, { cue_id: show.cues[i % 2] });
        },
      },
      { name: 'mint token (auth)', expect: 201, run: (g) => call(`${g.adminUrl}/teams/${teamId}/tokens`, 'POST', { token: adminSecret, body: { role: 'VIEW' } }) },
    ];
    const worker = async () => {
      while (running) {
        const i = n++;
        const op = ops[i % ops.length]!;
        const g = await balancer.pick();
        const started = performance.now();
        try {
          const res = await op.run(g, i);
          const ok = res.status === op.expect;
          outcomes.push({ op: op.name, gateway: g.index, started, ended: performance.now(), ok, ...(ok ? {} : { detail: `${res.status} ${res.text.slice(0, 200)}` }) });
        } catch (error) {
          outcomes.push({ op: op.name, gateway: g.index, started, ended: performance.now(), ok: false, detail: String((error as Error).cause ?? error) });
        }
      }
    };
    const workers = Array.from({ length: WORKERS }, () => worker());

    // Socket.IO clients through gateway B's proxy, spread over both realtime replicas.
    const issued = await call(`${gatewayA.adminUrl}/teams/${teamId}/v0-token`, 'POST', { token: adminSecret });
    expect(issued.status, issued.text).toBe(201);
    const v0Token = issued.body.data.token as string;
    const sockets: { socket: Socket; connects: number; reasons: string[]; errors: string[] }[] = [];
    let socketsOpen = true;
    for (let i = 0; i < 6; i++) {
      const socket = io(system.of('gateway', 1).url, {
        path: '/api-v0/socket.io',
        auth: { rundownId: rundowns[i % 4], apiToken: v0Token },
        transports: ['websocket'],
        reconnectionDelay: 100,
        reconnectionDelayMax: 500,
        forceNew: true,
      });
      const entry = { socket, connects: 0, reasons: [] as string[], errors: [] as string[] };
      socket.on('connect', () => entry.connects++);
      // A refusal that says "retry" (the replica could not load the rundown in time) is retried, as
      // the v0 clients do; Socket.IO itself only retries lost transports.
      socket.on('connect_error', (error) => {
        entry.errors.push(error.message);
        if (/retry/i.test(error.message)) setTimeout(() => socketsOpen && socket.connect(), 250);
      });
      socket.on('disconnect', (reason) => entry.reasons.push(reason));
      sockets.push(entry);
    }
    await waitUntil('every socket connected', () => sockets.every((s) => s.connects > 0), 60_000, () => JSON.stringify(sockets.map((s) => s.errors.slice(-3))));

    await sleep(1_500); // steady state before the first SIGTERM
    const figures: { service: string; requests: number; failed: number; inFlightAtSigterm: number; drainMs: number; exitCode: number | null }[] = [];
    let jobsPlaced = 0;
    let jobsLost = 0;
    let sseDisconnects = 0;
    let sseStreams = 0;

    for (const service of ['auth', 'rundown', 'cells', 'runner', 'realtime', 'gateway']) {
      const victim = system.of(service, 0);
      // Work of its own around the SIGTERM: deadline jobs for the runner, SSE streams for the gateway.
      const timed: { id: string; second: string }[] = [];
      if (service === 'runner') {
        for (let i = 0; i < 8; i++) {
          const show = await v1(system.of('gateway', 1), 'POST', '/rundowns', {
            title: `timed ${i}`,
            cues: [
              { title: 'first', duration_ms: 300 + i * 150, auto_advance: true },
              { title: 'second', duration_ms: 600_000 },
            ],
          });
          const cues = await v1(system.of('gateway', 1), 'GET', `/rundowns/${show.body.data.id}/cues`);
          timed.push({ id: show.body.data.id, second: cues.body.data.items[1].id });
          const started = await v1(system.of('gateway', 1), 'POST', `/rundowns/${show.body.data.id}/action:start`);
          expect(started.status, started.text).toBe(200);
        }
        jobsPlaced += timed.length;
      }
      const streams: ReturnType<typeof openSse>[] = [];
      if (service === 'gateway') for (const id of rundowns) streams.push(openSse(victim.url, id, token));
      if (streams.length) await Promise.all(streams.map((s) => s.ready));

      const sigterm = performance.now();
      victim.child.kill('SIGTERM');
      const exit = await Promise.race([victim.exited, sleep(DELAY_MS + GRACE_MS + 10_000).then(() => undefined)]);
      expect(exit, `${service}#0 did not exit:\n${victim.output.slice(-20).join('\n')}`).toBeDefined();
      const during = outcomes.filter((o) => o.ended >= sigterm && o.started <= exit!.at);
      figures.push({
        service,
        requests: during.length,
        failed: during.filter((o) => !o.ok).length,
        inFlightAtSigterm: outcomes.filter((o) => o.started < sigterm && o.ended > sigterm).length,
        drainMs: Math.round(exit!.at - sigterm),
        exitCode: exit!.code,
      });
      expect(exit!.code, victim.output.slice(-20).join('\n')).toBe(0);

      if (service === 'runner') {
        // Each show's deadline job fired (on either replica): the first cue ended, the second runs.
        await sleep(3_000);
        for (const show of timed) {
          const status = await v1(system.of('gateway', 1), 'GET', `/rundowns/${show.id}/status`);
          if (status.body.data?.active_cue?.id !== show.second) jobsLost++;
        }
      }
      if (service === 'gateway') {
        await Promise.all(streams.map((s) => s.ended));
        sseStreams += streams.length;
        sseDisconnects += streams.filter((s) => s.events.at(-1) === 'disconnect').length;
      }
      await sleep(1_000); // steady again on the surviving replicas
    }

    // Socket.IO: the clients of the stopped realtime replica saw their transport close (not a
    // server-side disconnect, which would not reconnect) and connected again through the proxy.
    await waitUntil('every socket connected again', () => sockets.every((s) => s.socket.connected), 60_000, () => JSON.stringify(sockets.map((s) => s.errors.slice(-3))));
    // Reasons as the server caused them (closing the clients below adds `io client disconnect`).
    const moved = sockets.filter((s) => s.reasons.length > 0).map((s) => ({ reasons: [...s.reasons] }));
    running = false;
    await Promise.all(workers);
    balancer.stop();
    socketsOpen = false;
    for (const s of sockets) s.socket.close();

    const failures = outcomes.filter((o) => !o.ok);
    console.log(
      [
        `graceful shutdown under load (${WORKERS} workers, ${outcomes.length} requests in all, SHUTDOWN_DELAY_MS=${DELAY_MS}):`,
        ...figures.map(
          (f) =>
            `  ${f.service.padEnd(9)} requests during SIGTERM->exit ${String(f.requests).padStart(5)} (in flight at SIGTERM ${f.inFlightAtSigterm})  failed ${f.failed}  drain ${f.drainMs} ms (delay ${DELAY_MS} + drain ${f.drainMs - DELAY_MS})  exit ${f.exitCode}`,
        ),
        `  jobs placed around the runner's SIGTERM ${jobsPlaced}, lost ${jobsLost}`,
        `  SSE streams on the stopped gateway ${sseStreams}, ended with disconnect ${sseDisconnects}`,
        `  Socket.IO clients moved off the stopped realtime replica ${moved.length}/${sockets.length}, reasons ${JSON.stringify([...new Set(moved.flatMap((s) => s.reasons))])}, all reconnected`,
        `  failed requests ${failures.length}`,
      ].join('\n'),
    );
    expect(failures, JSON.stringify(failures.slice(0, 5))).toEqual([]);
    for (const f of figures) expect(f.requests, `${f.service}: load kept flowing`).toBeGreaterThan(0);
    expect(jobsLost).toBe(0);
    expect(sseDisconnects).toBe(sseStreams);
    expect(moved.length).toBeGreaterThan(0);
    expect(moved.flatMap((s) => s.reasons).every((r) => r === 'transport close' || r === 'transport error')).toBe(true);
  }, 300_000);
});

async function waitUntil(what: string, predicate: () => boolean, timeoutMs = 20_000, explain: () => string = () => ''): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what} ${explain()}`);
    await sleep(50);
  }
}

/** A bare SSE client: the event names it received, until the server ends the stream. */
function openSse(baseUrl: string, rundownId: string, token: string) {
  const events: string[] = [];
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  const ended = (async () => {
    const res = await fetch(`${baseUrl}/v1/rundowns/${rundownId}/events`, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } });
    if (res.status !== 200 || !res.body) throw new Error(`events answered ${res.status}`);
    const parser = createParser({
      onEvent: (e) => {
        events.push(e.event ?? 'message');
        if (e.event === 'status') markReady();
      },
    });
    const decoder = new TextDecoder();
    for await (const chunk of res.body) parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }));
  })();
  return { events, ready, ended };
}
