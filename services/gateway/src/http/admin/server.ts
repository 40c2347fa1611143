import { timingSafeEqual } from 'node:crypto';
import express, { type Express, type RequestHandler } from 'express';
import { AppError, type Logger } from '@rundown/shared/core';
import type { PublicUrls } from '../../config.js';
import type { Principal } from '../../edge/authenticator.js';
import { notFoundOrMethodNotAllowed } from '../fallback.js';
import { jsonBody } from '../middleware/body.js';
import { requestId } from '../middleware/request-id.js';
import { presentedToken } from '../middleware/authenticate.js';
import type { RouteDef } from '../route.js';
import { problemHandler } from '../problem.js';
import { buildRouter } from '../router.js';

const adminPrincipal: Principal = {
  tokenId: 'admin',
  teamId: '',
  role: 'OWNER',
  rundownId: undefined,
  issuedAt: 0,
  expiresAt: 0,
  environment: 'admin',
  team: { plan: 'paid', rate_limit_per_minute: 0, max_rundowns: 0 },
};

/** The internal admin listener: the same envelope and problems, authenticated by ADMIN_SECRET. */
export function createAdminApp(options: { routes: RouteDef[]; secret: string; urls: PublicUrls; logger: Logger }): Express {
  const expected = Buffer.from(options.secret);
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(requestId);
  // The body is read only once the secret is known good.
  const bodyOfAuthenticated: RequestHandler = (req, res, next) => (res.locals.authError ? next() : jsonBody(req, res, next));
  app.use(
    buildRouter(options.routes, async (req, route) => {
      const given = Buffer.from(presentedToken(req, route.auth));
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        throw new AppError('auth.invalid_token', { detail: 'The admin secret is not valid.' });
      }
      return adminPrincipal;
    }, { prefix: '/admin', before: [bodyOfAuthenticated] }),
  );
  app.use(notFoundOrMethodNotAllowed([{ prefix: '/admin', routes: options.routes }]));
  app.use(problemHandler(options.urls, options.logger));
  return app;
}
