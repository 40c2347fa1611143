// `npm run bench -- --only webhooks`: webhook deliveries from an event's commit to a real receiver.
//
// Starts the whole system through the launcher (compiled services, telemetry on, see startBenchSystem),
// a receiving HTTP server on loopback in this process, and `--endpoints` (10) webhook endpoints on it
// subscribed to every cell event. Two measurements:
// 1. Latency at a steady `--rate` (50) events per second for `--seconds`: each event is one cell write
//    (PATCH /cells, paced), delivered to every endpoint. Figure: from the event's commit (the body's
//    `timestamp`, the event's time in the service that committed it) to the receiver, p50/p99. Baseline
//    in the same run: the same events' arrival over SSE (GET /rundowns/:id/events?events=cell), the
//    push path that exists for clients holding a stream open, measured from the same commit time.
// 2. The highest sustained delivery rate: steps of event rates (cells:bulk writes of 10 cells every
//    100 ms per step rate), each for `--step-seconds`; a step is sustained when every delivery arrived
//    and the p99 (commit -> receiver) is at most 1 s. Baseline in the same run: bare signed POSTs from
//    this process to the same receiver (undici, 64 connections), what the machine does without the
//    service in between.
//
//   npm run bench -- --only webhooks   (or: node --conditions=source --import tsx scripts/bench/webhooks.ts [-- --rate 50 --seconds 20])
//
// Traffic goes to loopback only; every loop is bounded by time.
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { Webhook } from 'standardwebhooks';
import { Agent, request } from 'undici';
import { quick, recordFigure, recordLatency } from './figures.js';
import { summarize } from './stats.js';
import { must, startBenchSystem, type Cleanup } from './support.js';

const { values } = parseArgs({
  options: {
    rate: { type: 'string', default: '50' },
    seconds: { type: 'string', default: quick ? '8' : '20' },
    endpoints: { type: 'string', default: '10' },
    steps: { type: 'string', default: quick ? '100,200' : '100,200,400,800' },
    'step-seconds': { type: 'string', default: quick ? '5' : '10' },
  },
  strict: true,
});
const RATE = Number(values.rate);
const SECONDS = Number(values.seconds);
const ENDPOINTS = Number(values.endpoints);
const STEPS = values.steps.split(',').map(Number);
const STEP_SECONDS = Number(values['step-seconds']);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The receiver: every webhook's arrival, by its webhook-id (a repeat keeps the first). */
interface Arrival {
  at: number;
  committed: number;
  tag: string;
}
const arrivals = new Map<string, Arrival>();
let received = 0;
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const at = Date.now();
    received++;
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { timestamp: string; data: { cell?: { content: string } } };
    const id = String(req.headers['webhook-id']);
    if (!arrivals.has(id)) arrivals.set(id, { at, committed: Date.parse(body.timestamp), tag: body.data.cell?.content ?? '' });
    res.writeHead(204).end();
  });
});

/** An SSE client of one rundown's cell events: the arrival of each content tag. */
function followCells(url: string, token: string, seen: Map<string, number>): () => void {
  const req = httpRequest(url, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } }, (res) => {
    let buffer = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      const at = Date.now();
      buffer += chunk;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const lines = frame.split('\n');
        if (!lines.includes('event:cell')) continue;
        const data = lines.find((l) => l.startsWith('data:'));
        const content = data ? (JSON.parse(data.slice(5)) as { cell: { content: string } }).cell.content : '';
        if (!seen.has(content)) seen.set(content, at);
      }
    });
  });
  req.end();
  return () => req.destroy();
}

const cleanups: Cleanup[] = [];
try {
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', () => resolve()));
  cleanups.push(() => new Promise<void>((r) => receiver.close(() => r())));
  const port = (receiver.address() as AddressInfo).port;
  const { system } = await startBenchSystem('rundown_bench_webhooks', 9, cleanups, { env: { WEBHOOKS_CONCURRENCY: '128', WEBHOOKS_ENDPOINT_CONCURRENCY: '16' } });
  const { ready } = system;
  const adminUrl = (path: string) => `${ready.admin_url}${path}`;
  const team = await must(adminUrl('/teams'), 'POST', ready.admin_secret, { name: 'bench-webhooks', plan: 'paid', rate_limit_per_minute: 1_000_000 }, 201);
  const owner = (await must(adminUrl(`/teams/${team.id}/tokens`), 'POST', ready.admin_secret, { role: 'OWNER', ttl_seconds: 7200 }, 201)).token as string;
  const api = (path: string) => `${ready.base_url}${path}`;
  for (let i = 0; i < ENDPOINTS; i++) await must(api('/webhooks'), 'POST', owner, { url: `http://127.0.0.1:${port}/hook-${i}`, events: ['cell'] }, 201);
  const rundown = await must(api('/rundowns'), 'POST', owner, { title: 'Bench webhooks', columns: [{ name: 'Text' }], cues: Array.from({ length: 50 }, (_, i) => ({ title: `Cue ${i}` })) }, 201);
  const cues = (await must(api(`/rundowns/${rundown.id}/cues`), 'GET', owner)).items as { id: string }[];
  const column = ((await must(api(`/rundowns/${rundown.id}/columns`), 'GET', owner)).items as { id: string }[])[0]!.id;
  const sse = new Map<string, number>();
  const stopSse = followCells(api(`/rundowns/${rundown.id}/events?events=cell`), owner, sse);
  cleanups.push(async () => stopSse());
  await sleep(500);

  const writes = new Agent({ connections: 32 });
  cleanups.push(() => writes.close());
  const write = async (body: unknown, path: string, method: 'PATCH' | 'POST') => {
    const res = await request(api(path), { method, dispatcher: writes, headers: { authorization: `Bearer ${owner}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    await res.body.dump();
    if (res.statusCode !== 200) throw new Error(`${method} ${path}: ${res.statusCode}`);
  };

  /** Paced cell writes: `perTick` cells every 100 ms (one PATCH, or one cells:bulk), tagged `prefix-<n>`. */
  async function pace(prefix: string, eventsPerSecond: number, seconds: number): Promise<string[]> {
    const tags: string[] = [];
    const perTick = Math.max(1, Math.round(eventsPerSecond / 10));
    const ticks = Math.round(seconds * 10);
    const started = performance.now();
    const inFlight: Promise<void>[] = [];
    for (let t = 0; t < ticks; t++) {
      const items = Array.from({ length: perTick }, (_, k) => {
        const tag = `${prefix}-${t * perTick + k}`;
        tags.push(tag);
        return { cue_id: cues[(t * perTick + k) % cues.length]!.id, column_id: column, content: tag };
      });
      inFlight.push(perTick === 1 ? write(items[0], `/rundowns/${rundown.id}/cells`, 'PATCH') : write({ items }, `/rundowns/${rundown.id}/cells:bulk`, 'POST'));
      const next = started + (t + 1) * 100;
      await sleep(Math.max(0, next - performance.now()));
    }
    await Promise.all(inFlight);
    return tags;
  }

  /** Waits until `expected` deliveries of these tags arrived (or `graceMs` passed): their latencies (commit -> receiver, ms). */
  async function collect(tags: string[], graceMs: number): Promise<{ latencies: number[]; missing: number }> {
    const wanted = new Set(tags);
    const expected = tags.length * ENDPOINTS;
    const deadline = Date.now() + graceMs;
    let mine: Arrival[] = [];
    for (;;) {
      mine = [...arrivals.values()].filter((a) => wanted.has(a.tag));
      if (mine.length >= expected || Date.now() > deadline) break;
      await sleep(200);
    }
    return { latencies: mine.map((a) => a.at - a.committed), missing: expected - mine.length };
  }

  // Warm-up.
  await collect(await pace('warm', 20, 2), 10_000);

  // 1. Latency at RATE events/s to ENDPOINTS endpoints, against SSE for the same events.
  const steady = await pace('steady', RATE, SECONDS);
  const { latencies, missing } = await collect(steady, 30_000);
  const webhookAt = new Map<string, number>();
  for (const a of arrivals.values()) if (a.tag.startsWith('steady-') && !webhookAt.has(a.tag)) webhookAt.set(a.tag, a.committed);
  const sseLatencies = steady.filter((tag) => sse.has(tag) && webhookAt.has(tag)).map((tag) => sse.get(tag)! - webhookAt.get(tag)!);
  const webhookSummary = summarize(latencies);
  const sseSummary = summarize(sseLatencies);
  const label = `event commit -> receiver, ${RATE} events/s to ${ENDPOINTS} endpoints`;
  recordLatency('webhooks', `event commit -> SSE client, ${RATE} events/s`, sseSummary);
  recordLatency('webhooks', label, webhookSummary, { baseline: `event commit -> SSE client, ${RATE} events/s`, ratio: webhookSummary.p99 / sseSummary.p99 });

  // 2. Bare signed POSTs to the same receiver: what the machine does without the service.
  const bare = new Agent({ connections: 64 });
  const signer = new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`);
  const payload = JSON.stringify({ type: 'cell.updated', timestamp: new Date().toISOString(), data: { rundown_id: 'rd', event_id: '1-0', change: 'updated', cell: { content: 'bare' } } });
  let bareCount = 0;
  const bareStart = performance.now();
  const bareDeadline = bareStart + 5_000;
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (performance.now() < bareDeadline) {
        const id = `bare_${bareCount}`;
        const res = await request(`http://127.0.0.1:${port}/bare`, {
          method: 'POST',
          dispatcher: bare,
          headers: { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'webhook-signature': signer.sign(id, new Date(), payload) },
          body: payload,
        });
        await res.body.dump();
        bareCount++;
      }
    }),
  );
  const bareRate = bareCount / ((performance.now() - bareStart) / 1000);
  await bare.close();

  // 3. Steps of event rates: the highest delivery rate sustained with every delivery in and p99 <= 1 s.
  const stepRows: { events: number; deliveries: number; p50: number; p99: number; missing: number }[] = [];
  let best: (typeof stepRows)[number] | undefined;
  for (const step of STEPS) {
    const tags = await pace(`step${step}`, step, STEP_SECONDS);
    const got = await collect(tags, 20_000);
    const s = summarize(got.latencies.length ? got.latencies : [Infinity]);
    const row = { events: step, deliveries: step * ENDPOINTS, p50: s.p50, p99: s.p99, missing: got.missing };
    stepRows.push(row);
    if (got.missing === 0 && s.p99 <= 1_000) best = row;
    else break;
  }
  recordFigure({ bench: 'webhooks', name: 'bare signed POSTs to the receiver, 64 conns', unit: 'req/s', value: bareRate, n: bareCount });
  recordFigure({
    bench: 'webhooks',
    name: `highest sustained delivery rate, p99 <= 1 s (${ENDPOINTS} endpoints)`,
    unit: 'deliveries/s',
    value: best?.deliveries ?? 0,
    ...(best ? { p50: best.p50, p99: best.p99 } : {}),
    baseline: 'bare signed POSTs to the receiver, 64 conns',
    ratio: (best?.deliveries ?? 0) / bareRate,
  });

  const f = (n: number) => n.toFixed(1).padStart(8);
  console.log(`webhooks benchmark: compiled services, telemetry on; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')} on ${cpus().length} cores\n`);
  console.log(`${'from the event commit'.padEnd(58)} ${'n'.padStart(6)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'max ms'.padStart(8)}`);
  console.log(`${`SSE client (baseline), ${RATE} events/s`.padEnd(58)} ${String(sseSummary.n).padStart(6)} ${f(sseSummary.p50)} ${f(sseSummary.p99)} ${f(sseSummary.max)}`);
  console.log(`${label.padEnd(58)} ${String(webhookSummary.n).padStart(6)} ${f(webhookSummary.p50)} ${f(webhookSummary.p99)} ${f(webhookSummary.max)}`);
  console.log(`missing deliveries: ${missing}; webhook / SSE p99 ratio: ${(webhookSummary.p99 / sseSummary.p99).toFixed(2)}\n`);
  console.log(`${'events/s'.padStart(9)} ${'deliveries/s'.padStart(13)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'missing'.padStart(8)}`);
  for (const r of stepRows) console.log(`${String(r.events).padStart(9)} ${String(r.deliveries).padStart(13)} ${f(r.p50)} ${f(r.p99)} ${String(r.missing).padStart(8)}`);
  console.log(`highest sustained (all delivered, p99 <= 1 s): ${best?.deliveries ?? 0} deliveries/s; bare signed POSTs: ${bareRate.toFixed(0)} req/s (ratio ${((best?.deliveries ?? 0) / bareRate).toFixed(2)})`);
  console.log(`webhooks received in all: ${received}`);
} finally {
  for (const cleanup of cleanups.reverse()) await cleanup();
}
