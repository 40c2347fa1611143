import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span } from '@opentelemetry/api';
import {
  ATTR_CLIENT_ADDRESS,
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_NETWORK_PROTOCOL_VERSION,
  ATTR_SERVER_PORT,
  ATTR_URL_PATH,
  ATTR_URL_SCHEME,
  ATTR_USER_AGENT_ORIGINAL,
} from '@opentelemetry/semantic-conventions';
import { httpRouteOf } from './telemetry-handle.js';

const tracer = trace.getTracer('@rundown/shared/http-server');

/** Probes and scrapes, polled every few seconds: a trace of each would only be noise. */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

type Emit = (event: string | symbol, ...args: unknown[]) => boolean;

/**
 * One SERVER span per request of `server`, in place of @opentelemetry/instrumentation-http, whose
 * incoming side (URL parsing, ~15 attributes, every request and response listener wrapped) was a
 * quarter of the gateway's CPU on its hottest read. The span continues the caller's trace (W3C
 * `traceparent`) and is the active span while every `request` listener runs, so what the handler
 * calls (gRPC, `timedWithoutSpan`) is its child. It is named `<METHOD> <route>` once a handler named
 * the route (`setHttpRoute`), else `<METHOD>`, and ends when the response closes: after its last
 * byte, or when the connection drops first. 5xx is an error; 4xx is the client's (HTTP semantic
 * conventions). `url.path` carries no query string: tokens travel in `?token=` on some routes.
 *
 * The server's `emit` is wrapped rather than its handler, so listeners added later (Socket.IO puts
 * its own in front of the server's) run inside the span too. WebSocket upgrades get no span.
 */
export function traceHttpServer(server: Server): void {
  const emit = server.emit as Emit;
  const traced: Emit = function (this: Server, event, ...args) {
    if (event !== 'request') return emit.call(this, event, ...args);
    const req = args[0] as IncomingMessage;
    const url = req.url ?? '/';
    if (UNTRACED_PATHS.has(url)) return emit.call(this, event, ...args);
    const method = req.method ?? 'GET';
    const parent = propagation.extract(ROOT_CONTEXT, req.headers);
    const span = tracer.startSpan(method, { kind: SpanKind.SERVER }, parent);
    const active = trace.setSpan(parent, span);
    // Attributes only for a span that is kept: unsampled (or without an SDK) it costs no more than its ids.
    if (span.isRecording()) record(span, method, url, req, args[1] as ServerResponse);
    bindBodyEvents(req, active);
    return context.with(active, emit, this, event, ...args);
  };
  server.emit = traced as Server['emit'];
}

function record(span: Span, method: string, url: string, req: IncomingMessage, res: ServerResponse): void {
  const query = url.indexOf('?');
  const socket = req.socket;
  span.setAttributes({
    [ATTR_HTTP_REQUEST_METHOD]: method,
    [ATTR_URL_PATH]: query === -1 ? url : url.slice(0, query),
    [ATTR_URL_SCHEME]: (socket as TLSSocket).encrypted ? 'https' : 'http',
    [ATTR_NETWORK_PROTOCOL_VERSION]: req.httpVersion,
    // The listener's own port and the connection's peer: behind a proxy the peer is the proxy
    // (X-Forwarded-For is the gateway's to trust, under TRUST_PROXY, not this module's).
    [ATTR_SERVER_PORT]: socket.localPort,
    [ATTR_CLIENT_ADDRESS]: socket.remoteAddress,
    [ATTR_USER_AGENT_ORIGINAL]: req.headers['user-agent'],
  });
  // 'close' follows 'finish' by a tick, and comes alone when the connection drops before the answer
  // is out: one listener ends the span exactly once either way.
  res.once('close', () => {
    const route = httpRouteOf(res);
    if (route !== undefined) {
      span.setAttribute(ATTR_HTTP_ROUTE, route);
      span.updateName(`${method} ${route}`);
    }
    if (res.headersSent) {
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, res.statusCode);
      if (res.statusCode >= 500) span.setAttribute(ATTR_ERROR_TYPE, String(res.statusCode)).setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
  });
}

/**
 * Node emits a request's body events ('data', 'end') from the connection's context, not from the
 * one its 'request' listeners ran in: a handler that reads the body by listening (Engine.IO's
 * polling POST, which carries a Socket.IO connect and so the realtime service's gRPC calls) would
 * otherwise continue outside the span. One wrapper of this request's `emit` rather than the
 * instrumentation's binding of every listener added to the request and the response.
 */
function bindBodyEvents(req: IncomingMessage, active: Context): void {
  const emit = req.emit as Emit;
  const bound: Emit = (event, ...args) => context.with(active, emit, req, event, ...args);
  req.emit = bound as IncomingMessage['emit'];
}

/**
 * The active trace context as W3C headers (`traceparent`, `tracestate`), for an HTTP request made
 * without an instrumentation (the gateway's proxy to the realtime service): the callee's server
 * span becomes a child of the active span. Empty without an SDK.
 */
export function traceHeaders(): Record<string, string> {
  const headers: Record<string, string> = {};
  propagation.inject(context.active(), headers);
  return headers;
}
