import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, freePorts, startSystem, type RunningSystem } from '../../scripts/launcher/child.js';
import { call } from '../support/client.js';
import { connected, v0Socket } from '../support/sockets.js';
import { createDatabase, isolatedRedis, startInfra, type TestInfra } from '../support/infra.js';
import { exportedSpans, type ExportedSpan, type OtlpSpan } from '../support/otlp.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/** A metric as the services push it over OTLP (the names only). */
interface ExportedMetric {
  service: string;
  name: string;
}

/** A stand-in OTLP/HTTP collector: keeps every span and the name of every metric the services export. */
function collector(spans: ExportedSpan[], metrics: ExportedMetric[]): Server {
  return createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url === '/v1/metrics') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          resourceMetrics: { resource: { attributes: { key: string; value: { stringValue?: string } }[] }; scopeMetrics: { metrics: { name: string }[] }[] }[];
        };
        for (const rm of body.resourceMetrics) {
          const service = rm.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue ?? '?';
          for (const sm of rm.scopeMetrics) for (const metric of sm.metrics) metrics.push({ service, name: metric.name });
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        return;
      }
      spans.push(...exportedSpans(Buffer.concat(chunks).toString('utf8')));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
}

let infra: TestInfra;
let database: Awaited<ReturnType<typeof createDatabase>>;
let system: RunningSystem;
let server: Server;
const spans: ExportedSpan[] = [];
const metrics: ExportedMetric[] = [];
const dataDir = mkdtempSync(join(tmpdir(), 'rundown-tracing-'));

beforeAll(async () => {
  infra = await startInfra();
  database = await createDatabase(infra.postgresServerUrl, 'rundown_tracing');
  const port = await freePort();
  server = collector(spans, metrics);
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  system = await startSystem({
    env: {
      ...(await freePorts()),
      DATABASE_URL: database.url,
      // A Redis db of its own: the suite's other systems must not share its streams and consumer groups.
      REDIS_URL: await isolatedRedis(infra.redisUrl, Number(process.env.E2E_TRACING_REDIS_DB ?? 10)),
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
      OTEL_BSP_SCHEDULE_DELAY: '100',
      // Every new trace recorded (the deployed default keeps a tenth): some of these requests carry no traceparent.
      OTEL_TRACES_SAMPLER_ARG: '1',
      OTEL_METRIC_EXPORT_INTERVAL: '500',
    },
  });
}, 120_000);

afterAll(async () => {
  await system?.stop();
  server?.close();
  await database?.drop();
  rmSync(dataDir, { recursive: true, force: true });
  await infra?.stop();
});

describe('traces', () => {
  it('follow one request from the gateway over gRPC into the rundown service and PostgreSQL', async () => {
    const { ready } = system;
    const token = await ownerToken('traced');
    const traceId = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
    const created = await call(`${ready.base_url}/rundowns`, 'POST', {
      token,
      body: { title: 'Traced show' },
      headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    });
    expect(created.status).toBe(201);

    let trace: ExportedSpan[] = [];
    // Up to 15 s: on a loaded machine a service's batch can lag well behind the answer.
    for (let i = 0; i < 150; i++) {
      trace = spans.filter((s) => s.traceId.toLowerCase() === traceId);
      // Each process exports in batches on its own timer: wait for the gateway's SERVER span too, not
      // only its first (a Redis span may arrive a batch ahead of the request's).
      const gatewayServer = trace.some((s) => s.service === 'gateway' && s.kind === 2);
      const rundown = trace.filter((s) => s.service === 'rundown');
      if (gatewayServer && rundown.some((s) => /INSERT|pg|postgres/i.test(s.name)) && rundown.some(isRedis)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const byService = (name: string) => trace.filter((s) => s.service === name);
    expect(byService('gateway').some((s) => s.kind === 2 /* SERVER */), JSON.stringify(trace.map((s) => [s.service, s.name]))).toBe(true);
    // The edge check (one Redis script per request) is timed on the request's span, not a span of its own.
    const server = byService('gateway').find((s) => s.kind === 2)!;
    const edgeCheck = server.attributes?.find((a) => a.key === 'rundown.edge_check_ms')?.value;
    expect(Number(edgeCheck?.doubleValue ?? edgeCheck?.intValue), JSON.stringify(server.attributes)).toBeGreaterThanOrEqual(0);
    expect(byService('gateway').some((s) => s.kind === 3 && /evalsha|edgeCheck/i.test(s.name))).toBe(false);
    // Named by the route that answered, with its status.
    expect(server.name).toBe('POST /v1/rundowns');
    expect(attribute(server, 'http.route')).toBe('/v1/rundowns');
    expect(attribute(server, 'http.response.status_code')).toBe(201);
    expect(byService('gateway').some((s) => s.name.includes('rundown.rundown.v1.RundownService/CreateRundown') && s.kind === 3 /* CLIENT */)).toBe(true);
    expect(byService('rundown').some((s) => s.name.includes('rundown.rundown.v1.RundownService/CreateRundown') && s.kind === 2)).toBe(true);
    expect(byService('rundown').some((s) => /INSERT|pg/i.test(s.name))).toBe(true);
    // Its Redis commands too (the instrumented client libraries: gRPC, pg, ioredis, each patched when loaded).
    expect(byService('rundown').some(isRedis), JSON.stringify(byService('rundown').map((s) => s.name))).toBe(true);
    // A pool checkout makes no span of its own beside its query's.
    expect(trace.filter((s) => s.name === 'pg-pool.connect')).toEqual([]);
  });

  it('of a cell read time its layout version read on the cells service span, with no Redis span of its own', async () => {
    const { ready } = system;
    const token = await ownerToken('traced cells');
    const rundown = await call(`${ready.base_url}/rundowns`, 'POST', { token, body: { title: 'Traced cells', columns: [{ name: 'Script' }], cues: [{ title: 'A' }] } });
    const cues = await call(`${ready.base_url}/rundowns/${rundown.body.data.id}/cues`, 'GET', { token });
    const traceId = 'e1b2c3d4e5f60718293a4b5c6d7e8f94';
    const read = await call(`${ready.base_url}/rundowns/${rundown.body.data.id}/cells?cue_id=${cues.body.data.items[0].id}&column_id=${rundown.body.data.column_order[0]}`, 'GET', {
      token,
      headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    });
    expect(read.status, read.text).toBe(200);
    const cellsServer = await eventually(() => spans.find((s) => s.traceId.toLowerCase() === traceId && s.service === 'cells' && s.kind === 2));
    expect(cellsServer?.name).toContain('rundown.cells.v1.CellService/GetCell');
    expect(Number(attribute(cellsServer!, 'rundown.layout_version_ms'))).toBeGreaterThanOrEqual(0);
    const cellsSpans = spans.filter((s) => s.traceId.toLowerCase() === traceId && s.service === 'cells');
    // The row is read by the prepared statement `cells.get` (its span is named by the statement's name).
    const rowRead = cellsSpans.find((s) => s.name.startsWith('pg.query:cells.get'));
    expect(rowRead, JSON.stringify(cellsSpans.map((s) => s.name))).toBeDefined();
    expect(String(attribute(rowRead!, 'db.statement') ?? attribute(rowRead!, 'db.query.text'))).toMatch(/^SELECT .* FROM cells\.cells WHERE/);
    expect(cellsSpans.filter((s) => s.kind === 3 && !/GetCell|Coordinate/i.test(s.name) && s !== rowRead)).toEqual([]);
  });
});

/** A new team's OWNER token, minted on the admin listener. */
describe('the trace of a webhook', () => {
  it('links the write, the fan-out of its event and each attempt', async () => {
    const { ready } = system;
    const token = await ownerToken('traced webhooks');
    const receiver = await WebhookReceiver.start();
    try {
      receiver.answer('/traced', 500, 204);
      const hook = await call(`${ready.base_url}/webhooks`, 'POST', { token, body: { url: receiver.url('/traced'), events: ['cue'] } });
      expect(hook.status, hook.text).toBe(201);
      const rundown = await call(`${ready.base_url}/rundowns`, 'POST', { token, body: { title: 'Traced webhook' } });
      const traceId = 'c1b2c3d4e5f60718293a4b5c6d7e8f96';
      const created = await call(`${ready.base_url}/rundowns/${rundown.body.data.id}/cues`, 'POST', { token, body: { title: 'A' }, headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` } });
      expect(created.status).toBe(201);
      await receiver.until(() => receiver.at('/traced').length >= 2, 15_000, 'the attempt and its retry');
      // The fan-out's span links to the write's trace; both attempts are its children (one trace from the event to every attempt).
      const fanOut = await eventually(() => spans.find((s) => s.service === 'webhooks' && s.name === 'webhooks fan-out' && s.links?.some((l) => l.traceId.toLowerCase() === traceId)));
      expect(fanOut, JSON.stringify(spans.filter((s) => s.service === 'webhooks').map((s) => s.name))).toBeDefined();
      const attempts = await eventually(() => {
        const found = spans.filter((s) => s.name === 'webhook attempt' && s.traceId === fanOut!.traceId && s.parentSpanId === fanOut!.spanId);
        return found.length >= 2 ? found : undefined;
      });
      expect(attempts?.map((a) => attribute(a, 'webhook.attempt')).sort()).toEqual([1, 2]);
      expect(attempts?.map((a) => attribute(a, 'http.response.status_code')).sort()).toEqual([204, 500]);
    } finally {
      await receiver.close();
    }
  });
});

async function ownerToken(name: string): Promise<string> {
  const { ready } = system;
  const team = await call(`${ready.admin_url}/teams`, 'POST', { token: ready.admin_secret, body: { name, plan: 'paid' } });
  return (await call(`${ready.admin_url}/teams/${team.body.data.id}/tokens`, 'POST', { token: ready.admin_secret, body: { role: 'OWNER' } })).body.data.token as string;
}

/** A span of a Redis command (the ioredis instrumentation's, by either semantic-conventions key). */
function isRedis(span: OtlpSpan): boolean {
  return (attribute(span, 'db.system') ?? attribute(span, 'db.system.name')) === 'redis';
}

/** A span attribute's value, whatever its OTLP type. */
function attribute(span: OtlpSpan, key: string): string | number | undefined {
  const value = span.attributes?.find((a) => a.key === key)?.value;
  if (value?.intValue !== undefined) return Number(value.intValue);
  return value?.doubleValue ?? value?.stringValue;
}

describe('the HTTP server span', () => {
  it('records the path of a control-surface read without its query string, so never its ?token=', async () => {
    const { ready } = system;
    const token = await ownerToken('query token');
    const show = await call(`${ready.base_url}/rundowns`, 'POST', { token, body: { title: 'Query token' } });
    const traceId = 'c1b2c3d4e5f60718293a4b5c6d7e8f92';
    const status = await call(`${ready.base_url}/rundowns/${show.body.data.id}/status`, 'GET', {
      query: { token },
      headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    });
    expect(status.status, status.text).toBe(200);
    const server = await eventually(() => spans.find((s) => s.traceId.toLowerCase() === traceId && s.service === 'gateway' && s.kind === 2));
    expect(server?.name).toBe('GET /v1/rundowns/:id/status');
    expect(server!.parentSpanId?.toLowerCase()).toBe('00f067aa0ba902b7');
    expect(attribute(server!, 'url.path')).toBe(`/v1/rundowns/${show.body.data.id}/status`);
    expect(attribute(server!, 'http.response.status_code')).toBe(200);
    expect(JSON.stringify(spans.filter((s) => s.traceId.toLowerCase() === traceId))).not.toContain(token);
  });

  it("of a v0 socket request proxied to the realtime service is the parent of the realtime service's span", async () => {
    const { ready } = system;
    const traceId = 'd1b2c3d4e5f60718293a4b5c6d7e8f93';
    // An Engine.IO handshake over polling: no token until the Socket.IO connect that would follow.
    const handshake = await call(`${new URL(ready.base_url).origin}/api-v0/socket.io/?EIO=4&transport=polling`, 'GET', {
      headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    });
    expect(handshake.status, handshake.text).toBe(200);
    const inTrace = (service: string) => spans.find((s) => s.traceId.toLowerCase() === traceId && s.service === service && s.kind === 2);
    const gateway = await eventually(() => inTrace('gateway'));
    const realtime = await eventually(() => inTrace('realtime'));
    expect(gateway?.name).toBe('GET /api-v0/socket.io');
    expect(realtime?.parentSpanId?.toLowerCase()).toBe(gateway!.spanId.toLowerCase());
    for (const span of [gateway!, realtime!]) expect(attribute(span, 'url.path')).toBe('/api-v0/socket.io/');
  });

  it('of a v0 socket connect posted over polling holds the calls the realtime service made for it', async () => {
    const { ready } = system;
    const team = await call(`${ready.admin_url}/teams`, 'POST', { token: ready.admin_secret, body: { name: 'v0 traced', plan: 'paid' } });
    const minted = await call(`${ready.admin_url}/teams/${team.body.data.id}/tokens`, 'POST', { token: ready.admin_secret, body: { role: 'OWNER' } });
    const show = await call(`${ready.base_url}/rundowns`, 'POST', { token: minted.body.data.token, body: { title: 'v0 traced' } });
    const v0Token = (await call(`${ready.admin_url}/teams/${team.body.data.id}/v0-token`, 'POST', { token: ready.admin_secret })).body.data.token as string;
    // The connect travels in a polling POST's body, which the realtime service reads by listening to the request.
    const client = v0Socket(show.body.data.id, v0Token, { url: new URL(ready.base_url).origin, transports: ['polling'] });
    try {
      await connected(client);
    } finally {
      client.close();
    }
    const posted = await eventually(() =>
      spans.find(
        (post) =>
          post.service === 'gateway' &&
          post.name === 'POST /api-v0/socket.io' &&
          spans.some((s) => s.traceId === post.traceId && s.service === 'realtime' && s.kind === 3 /* CLIENT: Redis, gRPC */),
      ),
    );
    expect(posted, JSON.stringify(spans.filter((s) => s.service === 'realtime').map((s) => [s.name, s.kind, s.traceId]))).toBeDefined();
  });
});

async function eventually<T>(probe: () => T | undefined, timeoutMs = 15_000): Promise<T | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('traces across jobs and the outbox', () => {
  it('link the show action to the deadline job that fires later and to the relay of the events it produced', async () => {
    const { ready } = system;
    const token = await ownerToken('linked');
    const show = await call(`${ready.base_url}/rundowns`, 'POST', {
      token,
      body: { title: 'Linked', cues: [{ title: 'short', duration_ms: 400, auto_advance: true }, { title: 'long', duration_ms: 60_000 }] },
    });
    expect(show.status).toBe(201);
    const traceId = 'b1b2c3d4e5f60718293a4b5c6d7e8f91';
    const started = await call(`${ready.base_url}/rundowns/${show.body.data.id}/action:start`, 'POST', {
      token,
      headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    });
    expect(started.status, started.text).toBe(200);
    const linkedTo = (s: ExportedSpan) => s.links?.some((l) => l.traceId.toLowerCase() === traceId) ?? false;

    // The deadline job fires ~400 ms later in a trace of its own, linked to the action's span.
    const job = await eventually(() => spans.find((s) => s.service === 'runner' && s.name === 'timer deadline' && linkedTo(s)));
    expect(job, JSON.stringify(spans.filter((s) => s.service === 'runner').map((s) => s.name))).toBeDefined();
    expect(job!.traceId.toLowerCase()).not.toBe(traceId);
    // The action's status event went through the runner's outbox: the relay's span links to the action too.
    const relay = await eventually(() => spans.find((s) => s.name === 'outbox append' && linkedTo(s)));
    expect(relay).toBeDefined();
    // The runner folds its status event into the transition's statement, so its relay reads it back;
    // the rundown service's writes enqueue theirs, which its relay appends from memory.
    expect(attribute(relay!, 'outbox.events_read_back')).toBe(attribute(relay!, 'outbox.events'));
    const created = await eventually(() => spans.find((s) => s.service === 'rundown' && s.name === 'outbox append'));
    expect(attribute(created!, 'outbox.events_read_back')).toBe(0);
    // And the job's own events link back to the job's trace (the chain continues).
    const jobTrace = job!.traceId.toLowerCase();
    expect(await eventually(() => spans.find((s) => s.name === 'outbox append' && s.links?.some((l) => l.traceId.toLowerCase() === jobTrace)))).toBeDefined();
  });
});

describe('a request sampled out', () => {
  it('records nothing in any service, yet its trace context reaches the rundown service over gRPC', async () => {
    const { ready } = system;
    const token = await ownerToken('sampled out');
    const traceId = '5a3d0c1e2f4b6a7980a1b2c3d4e5f6a7';
    const callerSpan = '00f067aa0ba902b7';
    // Flags 00: the caller did not sample it; parent-based sampling follows the caller, whatever the ratio (here 1).
    const created = await call(`${ready.base_url}/rundowns`, 'POST', { token, body: { title: 'Sampled out' }, headers: { traceparent: `00-${traceId}-${callerSpan}-00` } });
    expect(created.status, created.text).toBe(201);
    // The rundown service stored the trace context of its write with the event (outbox), and the relay's
    // span (a trace of its own, sampled) links to it: same trace id, a span id made downstream of the caller's.
    const relay = await eventually(() => spans.find((s) => s.service === 'rundown' && s.name === 'outbox append' && s.links?.some((l) => l.traceId.toLowerCase() === traceId)));
    expect(relay, 'the rundown service never saw the trace context').toBeDefined();
    const link = relay!.links!.find((l) => l.traceId.toLowerCase() === traceId)!;
    expect(link.spanId.toLowerCase()).not.toBe(callerSpan);
    // Nothing of the request itself was recorded anywhere (the relay's own trace is another one).
    await new Promise((r) => setTimeout(r, 500));
    expect(spans.filter((s) => s.traceId.toLowerCase() === traceId).map((s) => `${s.service} ${s.name}`)).toEqual([]);
  });
});

describe('metrics over OTLP', () => {
  it('pushes the RED histograms and the domain gauges of every service', async () => {
    const names = (service: string) => new Set(metrics.filter((m) => m.service === service).map((m) => m.name));
    const wanted: [string, string][] = [
      ['gateway', 'http.server.request.duration'],
      ['gateway', 'rundown.sse.connections'],
      ['rundown', 'rpc.server.call.duration'],
      ['rundown', 'rundown.outbox.lag'],
      ['runner', 'rundown.jobs.queued'],
      ['runner', 'rundown.jobs.late'],
      ['realtime', 'rundown.socketio.connections'],
    ];
    await eventually(() => (wanted.every(([service, name]) => names(service).has(name)) ? true : undefined));
    for (const [service, name] of wanted) expect(names(service), `${service} ${name}`).toContain(name);
  });
});
