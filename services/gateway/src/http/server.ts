import express, { type Express, type RequestHandler, type Router } from 'express';
import { AppError, httpRouteOf, isStopping, recordHttpRequest, type Logger } from '@rundown/shared/core';
import type { PublicUrls } from '../config.js';
import type { Authenticator } from '../edge/authenticator.js';
import type { IdempotencyStore } from '../edge/idempotency.js';
import type { RateLimiter } from '../edge/rate-limiter.js';
import { missingHost, unsupportedExpectation } from './client-errors.js';
import { asyncApiDocument } from './asyncapi.js';
import { apiReferenceInitScript, apiReferencePageHtml, DOCS_CSP, errorReferenceHtml, eventsPageHtml } from './docs.js';
import { scalarBundle } from './docs-assets.js';
import { v0OpenApiDocument } from './v0/openapi.js';
import { presentedToken } from './middleware/authenticate.js';
import { notFoundOrMethodNotAllowed, options as optionsResponder } from './fallback.js';
import { idempotency } from './middleware/idempotency.js';
import { jsonBody } from './middleware/body.js';
import { rateLimit } from './middleware/rate-limit.js';
import { requestId } from './middleware/request-id.js';
import { openApiDocument, staticV1Routes } from './openapi.js';
import { problemHandler } from './problem.js';
import type { RouteDef } from './route.js';
import { MCP_PATH, mcpRoute, McpTools } from '../mcp/server.js';
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
 * The public listener. A v1 request goes: request id → authentication and role (one Redis round trip
 * for revocation, limits and the team's count) → rate limit (the team's decision from that round
 * trip, or the address's budget without a valid token; headers on every answer) → body (1 MB cap,
 * JSON, depth) → idempotency → validation → handler. The docs, the OpenAPI document and every
 * 404/405 are counted per address too (per team with a valid token). Health probes are not limited.
 */
export function createPublicApp(options: PublicAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  if (options.trustProxy !== undefined) app.set('trust proxy', options.trustProxy);
  if (options.socketProxy) {
    const proxy = options.socketProxy;
    app.use((req, res, next) => (proxy(req, res) ? undefined : next()));
  }
  const limit = rateLimit(options.rateLimiter, options.anonymousRateLimit);
  const mounts = [
    { prefix: '/v1', routes: [...options.routes, ...staticV1Routes] },
    { prefix: '', routes: DOCS_PATHS.map((path) => ({ method: 'get' as const, path })) },
    ...(options.viewer ? [{ prefix: '', routes: VIEWER_ROUTES }] : []),
    { prefix: '', routes: [{ method: 'post' as const, path: MCP_PATH }] },
  ];
  const answerOptions = optionsResponder(mounts);
  // The front of every request, as one layer: its id; then, counted against the address, what no
  // route answers: an Expect the edge cannot meet (Node hands it over through `checkExpectation`),
  // OPTIONS (204 with Allow), and a /v1 path that is not valid percent-encoding (it names nothing:
  // 404, rather than a failure inside the router's parameter decoding).
  app.use((req, res, next) => {
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
  });
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', (_req, res) => {
    res.status(options.ready() ? 200 : 503).json({ status: options.ready() ? 'ready' : 'starting' });
  });

  // After authentication and the role (in the router), as one step: count the request, read the
  // body (never for an unauthenticated or unauthorized request, whose 401/403/429 comes first; never
  // for reads), then idempotency. The router names the trace and the metrics by route.
  const keyed = idempotency(options.idempotencyStore, options.logger);
  const edge: RequestHandler = (req, res, next) => {
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
  const authenticate = (req: express.Request, route: RouteDef) => options.authenticator.authenticate(presentedToken(req, route.auth));
  app.use(buildRouter(options.routes, authenticate, { prefix: '/v1', before: [edge], labelRoutes: true }));
  // MCP (docs/mcp.md): one more route through the same edge, its tools dispatching to the v1 routes.
  app.use(buildRouter([mcpRoute(new McpTools(options.routes, options.urls, options.logger))], authenticate, { prefix: '', before: [edge], labelRoutes: true }));
  if (options.v0) app.use('/api-v0/rundown', options.v0);

  // Self-description, generated once from the route table and the error catalogue.
  const document = openApiDocument(options.routes, options.urls);
  const documentJson = JSON.stringify(document);
  const errors = errorReferenceHtml(options.urls);
  const v0DocumentJson = JSON.stringify(v0OpenApiDocument(options.routes, options.urls));
  const events = asyncApiDocument(options.urls);
  const eventsJson = JSON.stringify(events);
  const eventsPage = eventsPageHtml(events, options.urls);
  const referencePage = apiReferencePageHtml(options.urls);
  const referenceInit = apiReferenceInitScript(options.urls);
  const renderer = scalarBundle();
  app.get('/v1/openapi.json', limit, (_req, res) => {
    res.type('application/json').send(documentJson);
  });
  const html = (body: string): RequestHandler => (_req, res) => {
    res.setHeader('Content-Security-Policy', DOCS_CSP);
    res.type('text/html; charset=utf-8').send(body);
  };
  app.get(['/docs', '/docs/'], limit, html(referencePage));
  app.get(['/docs/api-v1/errors', '/docs/api-v1/errors/'], limit, html(errors));
  app.get(['/docs/events', '/docs/events/'], limit, html(eventsPage));
  app.get('/docs/events/asyncapi.json', limit, (_req, res) => {
    res.type('application/json').send(eventsJson);
  });
  app.get('/docs/api-v0/openapi.json', limit, (_req, res) => {
    res.type('application/json').send(v0DocumentJson);
  });
  // Served here; the page names them by the paths the browser sees under PUBLIC_URL (docsAssetPaths).
  app.get('/docs/assets/init.js', limit, (_req, res) => {
    res.type('text/javascript; charset=utf-8').setHeader('Cache-Control', 'no-cache').send(referenceInit);
  });
  app.get('/docs/assets/scalar-api-reference.js', limit, (_req, res) => {
    // The bytes are read and prepared once per process; clients cache them for an hour.
    res.type('text/javascript; charset=utf-8').setHeader('Cache-Control', 'public, max-age=3600');
    res.send(renderer);
  });
  if (options.viewer) app.use(viewerRouter({ urls: options.urls, heartbeatMs: options.viewer.heartbeatMs, limit }));

  // Only requests without a valid token count per address: a valid token on an unknown path or
  // method still spends its team's budget.
  const identifyIfPresented: RequestHandler = (req, res, next) => {
    if (req.headers.authorization === undefined) return next();
    options.authenticator.authenticate(presentedToken(req, 'bearer')).then(
      (principal) => {
        res.locals.principal = principal;
        next();
      },
      () => next(),
    );
  };
  app.use(identifyIfPresented, limit, notFoundOrMethodNotAllowed(mounts));
  app.use(problemHandler(options.urls, options.logger));
  return app;
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

/** What the public listener serves besides /v1 and the health probes (GET only: the others answer 405). */
const DOCS_PATHS = [
  '/docs',
  '/docs/api-v1/errors',
  '/docs/events',
  '/docs/events/asyncapi.json',
  '/docs/api-v0/openapi.json',
  '/docs/assets/init.js',
  '/docs/assets/scalar-api-reference.js',
];

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
