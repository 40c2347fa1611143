import type { RequestHandler } from 'express';
import { match } from 'path-to-regexp';
import { AppError } from '@rundown/shared/core';
import { expressPath, type RouteDef } from './route.js';

type Mounts = { prefix: string; routes: Pick<RouteDef, 'method' | 'path'>[] }[];

/** Which methods the route table answers on a path (HEAD wherever GET), matched as the router does. */
export function methodIndex(mounts: Mounts): (path: string) => Set<string> {
  const matchers = mounts.flatMap(({ prefix, routes }) =>
    routes.map((r) => ({ method: r.method.toUpperCase(), test: match(prefix + expressPath(r.path), { decode: false, sensitive: true }) })),
  );
  return (path) => {
    const allowed = new Set(matchers.filter((m) => m.test(path)).map((m) => m.method));
    if (allowed.has('GET')) allowed.add('HEAD');
    return allowed;
  };
}

const allowHeader = (allowed: Set<string>) => [...allowed].sort().join(', ');

/**
 * The catch-all after every route: a known path with another method is 405 with `Allow`,
 * anything else is 404 `not_found`, both as problem+json.
 */
export function notFoundOrMethodNotAllowed(mounts: Mounts): RequestHandler {
  const methods = methodIndex(mounts);
  return (req, _res, next) => {
    const allowed = methods(req.path);
    // A route of this method that still did not answer (its path could not be decoded) is no 405.
    if (allowed.size && !allowed.has(req.method)) {
      const allow = allowHeader(allowed);
      return next(new AppError('method_not_allowed', { detail: `${req.method} is not allowed here; use ${allow}.`, headers: { Allow: allow } }));
    }
    next(new AppError('not_found', { detail: `No route ${req.method} ${req.path}.` }));
  };
}

/**
 * OPTIONS answered by the edge (counted, with RateLimit headers) rather than by Express's
 * built-in responder: 204 with `Allow` on a known path, 404 elsewhere.
 */
export function options(mounts: Mounts): RequestHandler {
  const methods = methodIndex(mounts);
  return (req, res, next) => {
    const allowed = methods(req.path);
    if (!allowed.size) return next(new AppError('not_found', { detail: `No route ${req.path}.` }));
    allowed.add('OPTIONS');
    res.setHeader('Allow', allowHeader(allowed));
    res.status(204).end();
  };
}
