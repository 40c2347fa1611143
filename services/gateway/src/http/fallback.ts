import type { RequestHandler } from 'express';
import { match } from 'path-to-regexp';
import { AppError } from '@rundown/shared';
import { expressPath, type RouteDef } from './route.js';

/**
 * The catch-all after every route: a known path with another method is 405 with `Allow`,
 * anything else is 404 `not_found`, both as problem+json.
 */
export function notFoundOrMethodNotAllowed(mounts: { prefix: string; routes: Pick<RouteDef, 'method' | 'path'>[] }[]): RequestHandler {
  const matchers = mounts.flatMap(({ prefix, routes }) =>
    routes.map((r) => ({ method: r.method.toUpperCase(), test: match(prefix + expressPath(r.path), { decode: false, sensitive: true }) })),
  );
  return (req, _res, next) => {
    const path = req.path;
    const allowed = new Set(matchers.filter((m) => m.test(path)).map((m) => m.method));
    // A route of this method that still did not answer (its path could not be decoded) is no 405.
    if (allowed.size && !allowed.has(req.method)) {
      if (allowed.has('GET')) allowed.add('HEAD');
      const allow = [...allowed].sort().join(', ');
      return next(new AppError('method_not_allowed', { detail: `${req.method} is not allowed here; use ${allow}.`, headers: { Allow: allow } }));
    }
    next(new AppError('not_found', { detail: `No route ${req.method} ${path}.` }));
  };
}
