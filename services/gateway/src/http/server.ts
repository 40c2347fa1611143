import express, { type Express, type RequestHandler, type Router } from 'express';
import { AppError, httpRouteOf, isStopping, recordHttpRequest, type Logger } from '@rundown/shared/core';
import type { PublicUrls } from '../config.js';
import type { Authenticator } from '../edge/authenticator.js';
import type { IdempotencyStore } from '../edge/idempotency.js';
import type { RateLimiter } from '../edge/rate-limiter.js';
import { missingHost, unsupportedExpectation } from './client-errors.js';
import { DOCS_PATHS, serveDocuments } from './documents.js';
import { presentedToken } from './middleware/authenticate.js';
import { notFoundOrMethodNotAllowed, options as optionsResponder } from './fallback.js';
import { idempotency } from './middleware/idempotency.js';
import { jsonBody } from './middleware/body.js';
import { rateLimit } from './middleware/rate-limit.js';
import { requestId } from './middleware/request-id.js';
import { staticV1Routes } from './openapi.js';
import { problemHandler } from './problem.js';
import type { RouteDef } from './route.js';
import { MCP_PATH, mcpRoute, McpTools } from './mcp/server.js';
import { buildRouter } from './router.js';
import { VIEWER_ROUTES, viewerRouter } from './viewer.js';

export interface PublicAppOptions {
  routes: RouteDef[];
  authenticator: Authenticator;
  urls: PublicUrls;
  logger: Logger;
  /** The v1 request budget (per team, per address without a valid token). */
  rateLimiter: RateLimiter;
  anonymousRateLimit: number;
  idempotencyStore: IdempotencyStore;
  ready: () => boolean;
  /** Express `trust proxy` (which X-Forwarded-For hops give the client address). */
  trustProxy?: string | boolean | number;
  /** The deprecated v0 HTTP API, mounted at `/api-v0/rundown` (its own auth, budget and error shape). */
  v0?: Router;
  /** Answers `/api-v0/socket.io` (proxied to the realtime service) and says so; anything else goes on. */
  socketProxy?: (req: express.Request, res: express.Response) => boolean;
  /** The stage screen at `/view/:rundown_id` (docs/api-decisions.md#viewer), told the SSE heartbeat period. */
  viewer?: { heartbeatMs: number };
}

/**
 * The public listener: the edge, in the order a request passes it. Each step names the file that
 * holds it; services/gateway/README.md#the-edge-in-order says what each answers.
 *
 * 1. The Socket.IO proxy takes `/api-v0/socket.io` (`v0/socket-proxy.ts`); nothing else.
 * 2. The front (`front` below): the request id (`middleware/request-id.ts`), the metrics, `Connection:
 *    close` while draining; then what no route answers, counted against the address: a missing Host, an
 *    Expect the edge cannot meet, OPTIONS (`fallback.ts`), a /v1 path that is not percent-encoding.
 * 3. The health probes (never counted).
 * 4. The route tables (`router.ts`: the v1 routes, then MCP's one route, `mcp/server.ts`): route match
 *    → token and role (`middleware/authenticate.ts`, `../edge/authenticator.ts`: one Redis round trip for
 *    revocation, limits and the team's count) → `afterAuthentication` below: rate limit
 *    (`middleware/rate-limit.ts`, the team's decision from that round trip, or the address's budget),
 *    then for a write the body (`middleware/body.ts`: 1 MB, JSON, depth) and idempotency
 *    (`middleware/idempotency.ts`) → path parameters, body and query validated (zod) → handler (gRPC)
 *    → the v1 envelope (`envelope.ts`).
 * 5. The v0 HTTP API (`v0/router.ts`: its own auth, budget and error shape).
 * 6. The documents and the stage screen (`documents.ts`, `viewer.ts`), counted per address (per team
 *    with a valid token).
 * 7. Anything else: 404, or 405 with `Allow` (`fallback.ts`), counted per team with a valid token,
 *    per address otherwise.
 * 8. Every error, from any step: problem+json (`problem.ts`). What Node's HTTP parser refuses before a
 *    request exists is answered the same way by `client-errors.ts`, outside this app.
 */
export function createPublicApp(options: PublicAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  if (options.trustProxy !== undefined) app.set('trust proxy', options.trustProxy);
  const limit = rateLimit(options.rateLimiter, options.anonymousRateLimit);
  const mounts = [
    { prefix: '/v1', routes: [...options.routes, ...staticV1Routes] },
    { prefix: '', routes: DOCS_PATHS.map((path) => ({ method: 'get' as const, path })) },
    ...(options.viewer ? [{ prefix: '', routes: VIEWER_ROUTES }] : []),
    { prefix: '', routes: [{ method: 'post' as const, path: MCP_PATH }] },
  ];

  // 1. The v0 push channel's proxy.
  if (options.socketProxy) {
    const proxy = options.socketProxy;
    app.use((req, res, next) => (proxy(req, res) ? undefined : next()));
  }
  // 2. The front.
  app.use(front(limit, mounts));
  // 3. The health probes.
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', (_req, res) => {
    res.status(options.ready() ? 200 : 503).json({ status: options.ready() ? 'ready' : 'starting' });
  });
  // 4. The route tables: v1, then MCP (docs/mcp.md: one more route through the same edge, its tools
  // dispatching to the v1 routes). The router names the trace and the metrics by route.
  const authenticate = (req: express.Request, route: RouteDef) => options.authenticator.authenticate(presentedToken(req, route.auth));
  const before = [afterAuthentication(limit, idempotency(options.idempotencyStore, options.logger))];
  app.use(buildRouter(options.routes, authenticate, { prefix: '/v1', before, labelRoutes: true }));
  app.use(buildRouter([mcpRoute(new McpTools(options.routes, options.urls, options.logger))], authenticate, { prefix: '', before, labelRoutes: true }));
  // 5. v0 HTTP.
  if (options.v0) app.use('/api-v0/rundown', options.v0);
  // 6. The documents and the stage screen.
  serveDocuments(app, { routes: options.routes, urls: options.urls, limit });
  if (options.viewer) app.use(viewerRouter({ urls: options.urls, heartbeatMs: options.viewer.heartbeatMs, limit }));
  // 7. 404 or 405, counted against the team when a valid token came, else the address.
  app.use(identifyIfPresented(options.authenticator), limit, notFoundOrMethodNotAllowed(mounts));
  // 8. problem+json.
  app.use(problemHandler(options.urls, options.logger));
  return app;
}

type Mounts = Parameters<typeof optionsResponder>[0];

/**
 * Step 2, the front of every request, as one layer: its id; the RED metrics; `Connection: close` while
 * draining; then, counted against the address, what no route answers: an Expect the edge cannot meet
 * (Node hands it over through `checkExpectation`), OPTIONS (204 with Allow), and a /v1 path that is
 * not valid percent-encoding (it names nothing: 404, rather than a failure inside the router's
 * parameter decoding).
 */
function front(limit: RequestHandler, mounts: Mounts): RequestHandler {
  const answerOptions = optionsResponder(mounts);
  return (req, res, next) => {
    requestId(req, res, () => undefined);
    // RED per route: one histogram record when the answer is written (the route template, set by
    // the router; fixed paths as they are; anything else under one label, so the series stay bounded).
    const started = performance.now();
    res.once('finish', () => recordHttpRequest(req.method, httpRouteOf(res) ?? fixedRoute(req.path), res.statusCode, (performance.now() - started) / 1000));
    // Draining: each answer closes its connection, so the client's next request opens one to a replica still serving.
    if (isStopping()) res.setHeader('connection', 'close');
    const refuse = (answer: (req: express.Request, res: express.Response, next: express.NextFunction) => void) =>
      settle(limit(req, res, (error?: unknown) => (error ? next(error) : answer(req, res, next))), next);
    if (missingHost(req)) return refuse(() => next(new AppError('request.malformed', { detail: 'An HTTP/1.1 request must carry a Host header.' })));
    if (unsupportedExpectation(req)) return refuse(() => next(new AppError('request.expectation_failed')));
    if (req.method === 'OPTIONS') return refuse(answerOptions);
    if (V1_PATH.test(req.path) && !decodable(req.path)) return refuse(() => next(new AppError('not_found')));
    next();
  };
}

/**
 * Step 4, after authentication and the role (in the router), as one step: count the request, read the
 * body (never for an unauthenticated or unauthorized request, whose 401/403/429 comes first; never
 * for reads), then idempotency.
 */
function afterAuthentication(limit: RequestHandler, keyed: RequestHandler): RequestHandler {
  return (req, res, next) => {
    const idempotent = (error?: unknown) => (error ? next(error) : settle(keyed(req, res, next), next));
    const body = (error?: unknown) => {
      if (error) return next(error);
      // A read, or a request whose 401/403 is to be sent, has no body and no idempotency step (it
      // would only pass it on, through two promises that cost more under the tracer's async context).
      if (res.locals.authError || req.method === 'GET' || req.method === 'HEAD') return next();
      settle(jsonBody(req, res, idempotent), next);
    };
    settle(limit(req, res, body), next);
  };
}

/**
 * Step 7's identification: only requests without a valid token count per address; a valid token on an
 * unknown path or method still spends its team's budget.
 */
function identifyIfPresented(authenticator: Authenticator): RequestHandler {
  return (req, res, next) => {
    if (req.headers.authorization === undefined) return next();
    authenticator.authenticate(presentedToken(req, 'bearer')).then(
      (principal) => {
        res.locals.principal = principal;
        next();
      },
      () => next(),
    );
  };
}

/** The metrics' route label of a request no v1 route answered. */
function fixedRoute(path: string): string {
  if (FIXED_PATHS.has(path)) return path;
  if (path.startsWith('/api-v0/socket.io')) return '/api-v0/socket.io';
  if (path.startsWith('/api-v0/')) return '/api-v0/rundown';
  return 'unmatched';
}

/** A step run by hand rather than by Express: its failure still reaches the problem handler. */
function settle(step: unknown, next: express.NextFunction): void {
  if (step instanceof Promise) step.catch(next);
}

const V1_PATH = /^\/v1(\/|$)/i;

/** Paths served outside the v1 route table (probes, the documents, the docs pages and assets), with or without a trailing slash. */
const FIXED_PATHS = new Set(['/healthz', '/readyz', '/v1/openapi.json', ...DOCS_PATHS.flatMap((p) => [p, `${p}/`])]);

function decodable(path: string): boolean {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}
