import { once } from 'node:events';
import { createServer, request, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { diag, DiagLogLevel, SpanKind, SpanStatusCode, trace, type SpanContext } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { setHttpRoute, timedWithoutSpan, traceHeaders, traceHttpServer } from '@rundown/shared';

// The lean HTTP server span (services/shared/src/http-server-span.ts) on a real node:http server,
// with a real tracer provider (AsyncLocalStorage context, W3C propagation) exporting to memory.

const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const tracer = trace.getTracer('http-server-span.test');
/** The SDK's complaints (a second end() of a span is one): none are expected. */
const complaints: string[] = [];

/** What a handler saw while it ran, by the request's `x-probe` header. */
const seen = new Map<string, { active?: SpanContext; child?: SpanContext; headers?: Record<string, string> }>();
/** Requests the /hang handler holds, to answer them after their client has gone. */
const held: ServerResponse[] = [];
const arrived = new EventTarget();

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const probe = String(req.headers['x-probe']);
  const path = req.url!.split('?')[0]!;
  if (path === '/healthz' || path === '/readyz' || path === '/metrics') return void res.end('ok');
  if (path.startsWith('/v1/things/')) {
    setHttpRoute(res, '/v1/things/:id');
    // As the gateway's edge check: timed on the active span, across an await.
    await timedWithoutSpan('rundown.edge_check_ms', () => new Promise((resolve) => setTimeout(resolve, 5)));
    const child = tracer.startSpan('downstream');
    child.end();
    seen.set(probe, { active: trace.getActiveSpan()?.spanContext(), child: child.spanContext(), headers: traceHeaders() });
    return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  }
  if (path === '/echo') {
    // The body read by listening, as Engine.IO's polling transport does: its events come from the connection.
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const child = tracer.startSpan('after the body');
      child.end();
      seen.set(probe, { active: trace.getActiveSpan()?.spanContext(), child: child.spanContext() });
      res.end(Buffer.concat(chunks));
    });
    return;
  }
  if (path === '/boom') return void res.writeHead(503).end();
  if (path === '/hang') {
    held.push(res);
    if (req.headers['x-stream']) res.writeHead(200, { 'content-type': 'text/event-stream' }).write(': open\n\n');
    arrived.dispatchEvent(new Event(probe));
    return;
  }
  res.writeHead(404).end();
}

let server: Server;
let port: number;

beforeAll(async () => {
  provider.register();
  diag.setLogger(
    { error: (m) => complaints.push(m), warn: (m) => complaints.push(m), info: () => {}, debug: () => {}, verbose: () => {} },
    DiagLogLevel.WARN,
  );
  server = createServer();
  traceHttpServer(server);
  // Added after the wrapping, as Socket.IO adds its own listener: it runs inside the span all the same.
  server.on('request', (req: IncomingMessage, res: ServerResponse) => void handle(req, res));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
});

afterEach(() => {
  exporter.reset();
  expect(complaints).toEqual([]);
});

afterAll(async () => {
  server.closeAllConnections();
  server.close();
  await provider.shutdown();
  diag.disable();
});

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

function send(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers: { 'user-agent': 'span-test/1', ...headers }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The server spans of trace `traceId` exported so far, once there are at least `count`. */
async function serverSpans(traceId: string, count = 1): Promise<ReadableSpan[]> {
  return vi.waitFor(
    () => {
      const found = exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.SERVER && s.spanContext().traceId === traceId);
      if (found.length < count) throw new Error(`${found.length} server spans of ${traceId} so far`);
      return found;
    },
    { timeout: 5_000, interval: 10 },
  );
}

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const PARENT_ID = 'b7ad6b7169203331';
const traceparent = (traceId: string, flags = '01') => `00-${traceId}-${PARENT_ID}-${flags}`;
const freshTraceId = () => crypto.randomUUID().replaceAll('-', '');

describe('the HTTP server span', () => {
  it("continues the caller's trace, is the active span in the handler and carries the request's attributes, never its query", async () => {
    const answer = await send('GET', '/v1/things/abc?token=secret-token&x=1', { traceparent: traceparent(TRACE_ID), 'x-probe': 'traced' });
    expect(answer.status).toBe(200);
    const [span] = await serverSpans(TRACE_ID);
    expect(span!.name).toBe('GET /v1/things/:id');
    expect(span!.parentSpanContext?.spanId).toBe(PARENT_ID);
    expect(span!.parentSpanContext?.isRemote).toBe(true);
    expect(span!.status.code).toBe(SpanStatusCode.UNSET);
    expect(span!.attributes).toMatchObject({
      'http.request.method': 'GET',
      'url.path': '/v1/things/abc',
      'url.scheme': 'http',
      'http.route': '/v1/things/:id',
      'http.response.status_code': 200,
      'network.protocol.version': '1.1',
      'server.port': port,
      'client.address': '127.0.0.1',
      'user_agent.original': 'span-test/1',
    });
    expect(span!.attributes['rundown.edge_check_ms']).toBeGreaterThanOrEqual(4);
    expect(JSON.stringify(span!.attributes)).not.toContain('secret-token');
    expect(JSON.stringify(span!.attributes)).not.toContain('?');
    // What the handler did after its await belongs to the span.
    const saw = seen.get('traced')!;
    expect(saw.active).toEqual(span!.spanContext());
    const child = exporter.getFinishedSpans().find((s) => s.spanContext().spanId === saw.child?.spanId);
    expect(child?.parentSpanContext?.spanId).toBe(span!.spanContext().spanId);
    // And an HTTP call it makes by hand carries the span as the callee's parent.
    expect(saw.headers).toEqual({ traceparent: `00-${TRACE_ID}-${span!.spanContext().spanId}-01` });
  });

  it('keeps the context through body events, which Node emits from the connection', async () => {
    const traceId = freshTraceId();
    const answer = await send('POST', '/echo', { traceparent: traceparent(traceId), 'x-probe': 'body', 'content-type': 'text/plain' }, 'x'.repeat(200_000));
    expect(answer.body.length).toBe(200_000);
    const [span] = await serverSpans(traceId);
    expect(span!.name).toBe('POST');
    expect(span!.attributes['http.route']).toBeUndefined();
    expect(seen.get('body')!.active).toEqual(span!.spanContext());
    const child = exporter.getFinishedSpans().find((s) => s.spanContext().spanId === seen.get('body')!.child?.spanId);
    expect(child?.parentSpanContext?.spanId).toBe(span!.spanContext().spanId);
  });

  it('starts a trace of its own without a traceparent', async () => {
    await send('GET', '/v1/things/def', { 'x-probe': 'root' });
    const active = seen.get('root')!.active!;
    const [span] = await serverSpans(active.traceId);
    expect(span!.parentSpanContext).toBeUndefined();
    expect(span!.spanContext()).toEqual(active);
  });

  it('marks a 5xx as an error and leaves a 4xx unset', async () => {
    const traceId = freshTraceId();
    await send('GET', '/boom', { traceparent: traceparent(traceId) });
    await send('GET', '/nothing-here', { traceparent: traceparent(traceId) });
    const spans = await serverSpans(traceId, 2);
    const boom = spans.find((s) => s.attributes['url.path'] === '/boom')!;
    expect(boom.status.code).toBe(SpanStatusCode.ERROR);
    expect(boom.attributes).toMatchObject({ 'http.response.status_code': 503, 'error.type': '503' });
    const missing = spans.find((s) => s.attributes['url.path'] === '/nothing-here')!;
    expect(missing.status.code).toBe(SpanStatusCode.UNSET);
    expect(missing.attributes['http.response.status_code']).toBe(404);
    expect(missing.attributes['error.type']).toBeUndefined();
  });

  it.each([
    ['before any answer', false],
    ['in the middle of a streamed answer', true],
  ])('ends once when the client drops the connection %s', async (_when, stream) => {
    const traceId = freshTraceId();
    const probe = `hang-${String(stream)}`;
    const received = new Promise((resolve) => arrived.addEventListener(probe, resolve, { once: true }));
    const headers: Record<string, string> = { traceparent: traceparent(traceId), 'x-probe': probe, ...(stream ? { 'x-stream': '1' } : {}) };
    const client = request({ host: '127.0.0.1', port, path: '/hang', headers, agent: false });
    client.on('error', () => undefined);
    client.end();
    await received;
    client.destroy();
    const [span] = await serverSpans(traceId);
    // The handler answers after its client has gone: the span is not ended a second time (the SDK would complain).
    const res = held.pop()!;
    await vi.waitFor(() => expect(res.destroyed).toBe(true));
    res.end('late');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId)).toHaveLength(1);
    expect(span!.status.code).toBe(SpanStatusCode.UNSET);
    // No answer went out before the drop: no status code to record.
    expect(span!.attributes['http.response.status_code']).toBe(stream ? 200 : undefined);
  });

  it('makes no span of health probes and metrics scrapes', async () => {
    const traceId = freshTraceId();
    for (const path of ['/healthz', '/readyz', '/metrics']) expect((await send('GET', path, { traceparent: traceparent(traceId) })).status).toBe(200);
    // A request after them, on the same trace: once its span is out, theirs would have been too.
    await send('GET', '/boom', { traceparent: traceparent(traceId) });
    const spans = await serverSpans(traceId);
    expect(spans.map((s) => s.attributes['url.path'])).toEqual(['/boom']);
  });

  it('records nothing for an unsampled caller but passes its trace on', async () => {
    const traceId = freshTraceId();
    await send('GET', '/v1/things/ghi', { traceparent: traceparent(traceId, '00'), 'x-probe': 'unsampled' });
    const saw = seen.get('unsampled')!;
    expect(saw.active?.traceId).toBe(traceId);
    expect(saw.headers?.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-00$`));
    // The traced request after it is out, so this one's span would be too.
    const after = freshTraceId();
    await send('GET', '/boom', { traceparent: traceparent(after) });
    await serverSpans(after);
    expect(exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId)).toEqual([]);
  });
});
