import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { AppError, newRequestId, type ErrorCode, type Logger } from '@rundown/shared/core';
import type { PublicUrls } from '../config.js';
import type { RateLimiter } from '../edge/rate-limiter.js';
import { exceeded, rateLimitHeaders } from './middleware/rate-limit.js';
import { problemDocument } from './problem.js';

/** What Node's HTTP parser refused, as the catalogue names it (Node's own answer would carry no body). */
function codeOf(error: NodeJS.ErrnoException): ErrorCode {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return 'request.headers_too_large';
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return 'payload.too_large';
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return 'request.timeout';
    default:
      return 'request.malformed';
  }
}

export interface ClientErrorOptions {
  urls: PublicUrls;
  rateLimiter: RateLimiter;
  anonymousRateLimit: number;
  logger: Logger;
}

/**
 * Answers what Node's HTTP layer refuses before any request object exists (a request line or headers
 * over the limit, an unknown method, malformed HTTP, a request that never arrived) like every other
 * answer of the edge: a problem+json with a catalogue code, an X-Request-Id and the RateLimit headers of
 * the address's budget (the only one a request that was never parsed can count against). The
 * connection is closed after the answer, as Node does: the parser cannot resume mid-stream.
 */
export function answerClientErrors(server: Server, options: ClientErrorOptions): void {
  // The response each connection last carried (public API; Node's own handler reads its private `_httpMessage`).
  const responses = new WeakMap<Duplex, ServerResponse>();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => responses.set(req.socket, res));
  const refuse = (error: NodeJS.ErrnoException, socket: Duplex, instance = instanceOf(error)) => {
    answer(error, socket, instance, responses.get(socket), options).catch((err: unknown) => {
      options.logger.error({ err }, 'could not answer a refused connection');
      socket.destroy();
    });
  };
  server.on('clientError', refuse);
  // CONNECT (a proxy's method) leaves the parser; without a listener Node drops the connection silently.
  server.on('connect', (req: IncomingMessage, socket: Duplex) =>
    refuse(Object.assign(new Error('CONNECT is not served'), { code: 'CONNECT' }), socket, pathOf(req.url ?? '')),
  );
  // Node answers an HTTP/1.1 request without Host with a bare 400 itself; the edge answers it instead
  // (see missingHost), with its problem+json, request id and RateLimit headers.
  (server as Server & { requireHostHeader: boolean }).requireHostHeader = false;
}

/** A request line: a method token, its target, the version (RFC 9112 §3). */
const REQUEST_LINE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+ ([^\s]+) HTTP\/\d\.\d$/;

/**
 * The problem's `instance` (the request path) of a request the parser refused, read from the bytes it
 * was given (`rawPacket`) when they start with a whole request line; '' when none could be read
 * (not HTTP, or a request line over the header limit).
 */
function instanceOf(error: NodeJS.ErrnoException & { rawPacket?: unknown }): string {
  if (!Buffer.isBuffer(error.rawPacket)) return '';
  const end = error.rawPacket.indexOf('\r\n');
  if (end <= 0) return '';
  const match = REQUEST_LINE.exec(error.rawPacket.subarray(0, end).toString('latin1'));
  return match ? pathOf(match[1]!) : '';
}

/** The path of a request target: origin form (`/v1/auth?x`) or absolute form; '' for any other (CONNECT's authority, `*`). */
function pathOf(target: string): string {
  if (target.startsWith('/')) return target.split('?')[0]!;
  if (!/^https?:\/\//i.test(target)) return '';
  try {
    return new URL(target).pathname;
  } catch {
    return '';
  }
}

/** RFC 9112 §3.2: an HTTP/1.1 request must carry Host (Node's own check is turned off in favour of the edge's). */
export const missingHost = (req: IncomingMessage): boolean => req.httpVersion === '1.1' && req.headers.host === undefined;

async function answer(error: NodeJS.ErrnoException, socket: Duplex, instance: string, last: ServerResponse | undefined, options: ClientErrorOptions): Promise<void> {
  // As Node's default: nothing to say on a reset connection, or while a response is under way on it
  // (an SSE stream: an answer written into it would corrupt the stream).
  const underWay = last !== undefined && last.headersSent && !last.writableFinished;
  if (error.code === 'ECONNRESET' || !socket.writable || underWay) {
    socket.destroy();
    return;
  }
  const requestId = newRequestId();
  const address = (socket as Duplex & { remoteAddress?: string }).remoteAddress ?? 'unknown';
  let appError = new AppError(codeOf(error));
  let headers: Record<string, string> = {};
  try {
    const decision = await options.rateLimiter.decide({ key: `ip:${address}`, limit: options.anonymousRateLimit, tier: 'anonymous' });
    headers = rateLimitHeaders(decision);
    if (!decision.allowed) appError = exceeded(decision);
  } catch (err) {
    options.logger.warn({ err, request_id: requestId }, 'no rate-limit decision for a refused connection');
  }
  if (!socket.writable) return void socket.destroy();
  const body = JSON.stringify(problemDocument(appError, { instance, requestId, urls: options.urls }));
  const lines = [
    `HTTP/1.1 ${appError.status} ${STATUS_CODES[appError.status] ?? 'Error'}`,
    'Content-Type: application/problem+json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${requestId}`,
    ...Object.entries({ ...headers, ...appError.headers }).map(([name, value]) => `${name}: ${value}`),
    'Connection: close',
  ];
  socket.end(`${lines.join('\r\n')}\r\n\r\n${body}`);
}

/**
 * An `Expect` other than 100-continue: Node would answer a bare 417 itself; instead the request goes
 * through the edge (request id, rate limit), which answers it with the problem+json.
 */
export function answerExpectations(server: Server): void {
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    server.emit('request', req, res);
  });
}

/** The one `Expect` the edge meets (Node sends `100 Continue` for it); anything else is 417. */
export const unsupportedExpectation = (req: IncomingMessage): boolean =>
  req.headers.expect !== undefined && !/^100-continue$/i.test(req.headers.expect);
