import express, { type ErrorRequestHandler, type Express, type RequestHandler, type Router } from 'express';
import { AppError, type Logger } from '@rundown/shared';
import type { PublicUrls } from '../config.js';
import type { Authenticator } from '../edge/authenticator.js';
import type { IdempotencyStore } from '../edge/idempotency.js';
import type { RateLimiter } from '../edge/rate-limiter.js';
import { apiReferenceHtml, errorReferenceHtml } from './docs.js';
import { presentedToken } from './middleware/authenticate.js';
import { notFoundOrMethodNotAllowed, options as optionsResponder } from './fallback.js';
import { idempotency } from './middleware/idempotency.js';
import { jsonBody } from './middleware/body.js';
import { rateLimit } from './middleware/rate-limit.js';
import { requestId } from './middleware/request-id.js';
import { openApiDocument, staticV1Routes } from './openapi.js';
import { sendProblem } from './problem.js';
import type { RouteDef } from './route.js';
import { buildRouter, type EdgeHooks } from './v1/router.js';

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
}

/**
 * The public listener. A v1 request goes: request id → authentication (header, or query on the
 * control surface) → rate limit (team bucket, or the address's without a valid token; headers on
 * every answer) → body (1 MB cap, JSON) → idempotency → validation → role → handler. The docs, the
 * OpenAPI document and every 404/405 are counted per address too. Health probes are not limited.
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
  app.use(requestId);
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', (_req, res) => {
    res.status(options.ready() ? 200 : 503).json({ status: options.ready() ? 'ready' : 'starting' });
  });

  const limit = rateLimit(options.rateLimiter, options.anonymousRateLimit);
  // An unauthenticated (or unauthorized) request's body is never read: its 401/403 (or 429) comes
  // first. Reads take no body, so none is read for them either.
  const bodyOfAuthenticated: RequestHandler = (req, res, next) =>
    res.locals.authError || req.method === 'GET' || req.method === 'HEAD' ? next() : jsonBody(req, res, next);
  const hooks: EdgeHooks = {
    before: [limit, bodyOfAuthenticated, idempotency(options.idempotencyStore, options.logger)],
  };
  const authenticate = (req: express.Request, route: RouteDef) => options.authenticator.authenticate(presentedToken(req, route.auth));
  const mounts = [
    { prefix: '/v1', routes: [...options.routes, ...staticV1Routes] },
    { prefix: '', routes: [{ method: 'get' as const, path: '/docs' }, { method: 'get' as const, path: '/docs/api-v1/errors' }] },
  ];
  const answerOptions = optionsResponder(mounts);
  app.use((req, res, next) => (req.method === 'OPTIONS' ? limit(req, res, (error?: unknown) => (error ? next(error) : answerOptions(req, res, next))) : next()));
  // A path that is not valid percent-encoding names nothing: a (rate limited) 404, rather than a
  // failure inside the router's parameter decoding.
  app.use('/v1', (req, res, next) => (decodable(req.path) ? next() : limit(req, res, () => next(new AppError('not_found')))));
  app.use('/v1', buildRouter(options.routes, authenticate, hooks));
  if (options.v0) app.use('/api-v0/rundown', options.v0);

  // Self-description, generated once from the route table and the error catalogue.
  const document = openApiDocument(options.routes, options.urls);
  const documentJson = JSON.stringify(document);
  const reference = apiReferenceHtml(document, options.urls);
  const errors = errorReferenceHtml(options.urls);
  app.get('/v1/openapi.json', limit, (_req, res) => {
    res.type('application/json').send(documentJson);
  });
  app.get(['/docs', '/docs/'], limit, (_req, res) => {
    res.type('text/html; charset=utf-8').send(reference);
  });
  app.get(['/docs/api-v1/errors', '/docs/api-v1/errors/'], limit, (_req, res) => {
    res.type('text/html; charset=utf-8').send(errors);
  });

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

export function problemHandler(urls: PublicUrls, logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    sendProblem(req, res, error, urls, logger);
  };
}

function decodable(path: string): boolean {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}
