import express, { type ErrorRequestHandler, type Express } from 'express';
import type { Logger } from '@rundown/shared';
import type { PublicUrls } from '../config.js';
import type { Authenticator } from '../edge/authenticator.js';
import { presentedToken } from './middleware/authenticate.js';
import { notFoundOrMethodNotAllowed } from './fallback.js';
import { jsonBody } from './middleware/body.js';
import { requestId } from './middleware/request-id.js';
import { sendProblem } from './problem.js';
import type { RouteDef } from './route.js';
import { buildRouter, type EdgeHooks } from './v1/router.js';

export interface PublicAppOptions {
  routes: RouteDef[];
  authenticator: Authenticator;
  urls: PublicUrls;
  logger: Logger;
  hooks?: EdgeHooks;
  ready: () => boolean;
}

/** The public listener: v1 (and later v0, docs), health endpoints, problem+json for everything else. */
export function createPublicApp(options: PublicAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.use(requestId);
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', (_req, res) => {
    res.status(options.ready() ? 200 : 503).json({ status: options.ready() ? 'ready' : 'starting' });
  });
  app.use(jsonBody);
  const authenticate = (req: express.Request, route: RouteDef) => options.authenticator.authenticate(presentedToken(req, route.auth));
  app.use('/v1', buildRouter(options.routes, authenticate, options.hooks));
  app.use(notFoundOrMethodNotAllowed([{ prefix: '/v1', routes: options.routes }]));
  app.use(problemHandler(options.urls, options.logger));
  return app;
}

export function problemHandler(urls: PublicUrls, logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    sendProblem(req, res, error, urls, logger);
  };
}
