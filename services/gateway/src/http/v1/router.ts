import { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { AppError, roleAtLeast } from '@rundown/shared';
import { callerOf, type Principal } from '../../edge/authenticator.js';
import { idempotentId } from '../../edge/idempotency.js';
import { sendData } from '../envelope.js';
import { expressPath, parseOrThrow, type RouteDef } from '../route.js';

export interface EdgeHooks {
  /** Runs after authentication (principal may be absent on failure) and before the route: rate limits, idempotency. */
  before?: RequestHandler[];
}

const isEmptyObject = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0;

/** Paths of every string (value or key) in a JSON value that holds U+0000. */
function nulPaths(value: unknown, path: (string | number)[] = [], found: (string | number)[][] = []): (string | number)[][] {
  if (typeof value === 'string') {
    if (value.includes('\u0000')) found.push(path);
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => nulPaths(item, [...path, i], found));
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      if (key.includes('\u0000')) found.push([...path, key]);
      else nulPaths(item, [...path, key], found);
    }
  }
  return found;
}

/** Establishes who is calling a route (a v1 token, or the admin secret on the admin listener). */
export type Authenticate = (req: Request, route: RouteDef) => Promise<Principal>;

/**
 * Mounts the route table: authenticate and authorize (role) → edge hooks → validate → handler →
 * envelope. The role is judged from the token alone, before the body is read or an idempotent
 * answer replayed: a token that may not write learns nothing about the body or another's answer.
 */
export function buildRouter(routes: RouteDef[], authenticate: Authenticate, hooks: EdgeHooks = {}): RequestHandler {
  // One Express router per method and number of path segments, in table order: a request is
  // matched against the few routes that could answer it, not the whole table (matching every layer
  // profiled as a large share of a short read's cost). A route's pattern has a fixed number of
  // segments (a parameter never spans a `/`), so no route is left out of a request's group.
  const groups = new Map<string, Router>();
  const dispatch: RequestHandler = (req, res, next) => {
    const group = groups.get(groupKey(req.method === 'HEAD' ? 'get' : req.method.toLowerCase(), req.path));
    if (group) group(req, res, next);
    else next();
  };
  for (const route of routes) {
    const identify = async (req: Request, res: Response, next: NextFunction) => {
      if (route.auth === 'none') return next();
      try {
        const principal = await authenticate(req, route);
        res.locals.principal = principal;
        if (route.role && !roleAtLeast(principal.role, route.role)) {
          // Still counted against the team's budget by the hooks; sent after them.
          res.locals.authError = new AppError('forbidden', {
            detail: `This operation needs the ${route.role} role; the token has ${principal.role}.`,
          });
        }
        next();
      } catch (error) {
        res.locals.authError = error;
        // Hooks still run (an unauthenticated request is rate limited per address), then the error is sent.
        next();
      }
    };
    const handle = async (req: Request, res: Response) => {
      if (res.locals.authError) throw res.locals.authError;
      if (res.locals.bodyError) throw res.locals.bodyError;
      const principal = res.locals.principal as Principal;
      let body: unknown = res.locals.body;
      if (route.emptyPatch && (body === undefined || body === null || isEmptyObject(body))) throw new AppError(route.emptyPatch);
      if (route.body) {
        const code = route.bodyError ?? 'bad_request';
        if (body === undefined && !route.bodyOptional) {
          throw AppError.validation(code, [{ path: [], message: 'A JSON body is required.', code: 'invalid_type' }]);
        }
        // PostgreSQL text cannot hold U+0000; refuse it here as the invalid input it is.
        const nul = nulPaths(body);
        if (nul.length) {
          throw AppError.validation(code, nul.map((path) => ({ path, message: 'Must not contain the NUL character (U+0000).', code: 'invalid_string' })));
        }
        body = parseOrThrow(route.body, body === undefined ? {} : body, code);
      }
      const query = route.query ? parseOrThrow(route.query, { ...req.query }, route.queryError ?? 'bad_request') : {};
      const reply = await route.handler({
        params: req.params as Record<string, string>,
        body,
        query,
        principal,
        keyedId: (prefix, part = '') => idempotentId(prefix, principal.teamId, `${req.baseUrl}${req.path}${part}`, req.headers['idempotency-key']),
        caller: route.auth === 'none' ? { requestId: res.locals.requestId as string } : callerOf(principal, res.locals.requestId as string),
        req,
        res,
      });
      if (reply.streamed) return;
      const status = reply.status ?? route.successStatus ?? 200;
      if (status === 204) {
        res.status(204).end();
        return;
      }
      sendData(res, reply.data, { ...reply, status });
    };
    const key = groupKey(route.method, route.path);
    let group = groups.get(key);
    if (!group) groups.set(key, (group = Router({ strict: false, caseSensitive: true })));
    group[route.method](expressPath(route.path), inSequence([identify, ...(hooks.before ?? []), handle]));
  }
  // The route layers, as a Router shows them, for whatever walks the app's stack (the OpenAPI test).
  return Object.assign(dispatch, { stack: [...groups.values()].flatMap((group) => group.stack) });
}

/**
 * The steps of one route as a single handler: each step's `next()` runs the one after it, an error
 * (passed to `next`, thrown, or a rejected promise) goes to Express's error handling as it would
 * from separate layers. One route layer instead of one per step: Express's per-layer dispatch
 * profiled as a visible share of a short read's cost.
 */
function inSequence(steps: RequestHandler[]): RequestHandler {
  return (req, res, next) => {
    let i = 0;
    const step = (error?: unknown): void => {
      if (error) return next(error);
      const current = steps[i++];
      if (!current) return next();
      try {
        const result: unknown = current(req, res, step);
        if (result instanceof Promise) result.catch(next);
      } catch (thrown) {
        next(thrown);
      }
    };
    step();
  };
}

/** `get 3` for `/rundowns/{id}/status` and for `/rundowns/abc/status/` (Express allows one trailing slash). */
function groupKey(method: string, path: string): string {
  let segments = 0;
  for (let i = 0; i < path.length; i++) if (path.charCodeAt(i) === 47) segments++;
  if (path.length > 1 && path.charCodeAt(path.length - 1) === 47) segments--;
  return `${method} ${segments}`;
}
