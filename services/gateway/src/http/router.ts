import { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { AppError, couldBeId, limits, roleAtLeast, setHttpRoute, type ErrorCode } from '@rundown/shared/core';
import { callerOf, type Principal } from '../edge/authenticator.js';
import { idempotentId } from '../edge/idempotency.js';
import { sendData } from './envelope.js';
import { expressPath, parseOrThrow, routeTemplate, type RouteDef } from './route.js';

export interface RouterOptions {
  /** Where the table is served (`/v1`, `/admin`); matched in any case, as Express's `app.use(prefix)` matched it. */
  prefix: string;
  /** Runs after authentication (principal may be absent on failure) and before the route: rate limits, idempotency. */
  before?: RequestHandler[];
  /** Names each request's span and metrics by its route template, prefix included (`/v1/rundowns/:id`). */
  labelRoutes?: boolean;
}

/** The table's dispatcher, and the (method, path) pairs it serves (Express's form) for whatever lists what is served. */
export type RouteDispatcher = RequestHandler & { served: readonly { method: string; path: string }[] };

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

/**
 * What a path parameter that could never name anything answers, by the parameter's name in the
 * table (`{cue_id}`): the resource's not-found; a text-variable key, the invalid key it is (as the
 * rundown service answers a key outside its characters).
 */
const malformedByParam: Readonly<Record<string, ErrorCode>> = {
  id: 'rundowns.not_found',
  cue_id: 'cues.not_found',
  column_id: 'columns.not_found',
  mention_id: 'mentions.not_found',
  key: 'text_variables.invalid_payload',
};

/**
 * A path parameter that could never be an id or a key (longer than any we issue or accept, or
 * holding a control character such as U+0000) is that resource's not-found (docs/api-decisions.md#envelope), answered
 * here: it never travels to a service, a query or an error's echo. The route's own code when the
 * route answers it, else `not_found`.
 */
export function malformedParam(params: Record<string, string>, route: Pick<RouteDef, 'errors'>): AppError | undefined {
  for (const name in params) {
    const value = params[name]!;
    if (couldBeId(value)) continue;
    const code = malformedByParam[name];
    return new AppError(code && route.errors?.includes(code) ? code : 'not_found', {
      detail: `The path's ${name} is longer than any (at most ${limits.idChars} characters) or holds a control character.`,
    });
  }
  return undefined;
}

/**
 * The `forbidden` error of a token whose role is below the route's (or, on a team-scope route, the
 * route's not-found error for a rundown-scoped token: it sees nothing there), or undefined when it may call it.
 */
export function roleRefusal(route: Pick<RouteDef, 'role' | 'teamScope'>, principal: Pick<Principal, 'role'> & { rundownId?: string | undefined }): AppError | undefined {
  if (route.teamScope && principal.rundownId) return new AppError(route.teamScope);
  if (!route.role || roleAtLeast(principal.role, route.role)) return undefined;
  return new AppError('forbidden', { detail: `This operation needs the ${route.role} role; the token has ${principal.role}.` });
}

/**
 * A request's body and query as the route declares them, parsed; a failure is the route's own code
 * (an empty PATCH, a missing or invalid body, NUL in a string, a bad query). Every adapter of the
 * route table (this router, the MCP tools) validates through here.
 */
export function validatedInput(route: RouteDef, rawBody: unknown, rawQuery: object): { body: unknown; query: unknown } {
  let body = rawBody;
  if (route.emptyPatch && (body === undefined || body === null || isEmptyObject(body))) throw new AppError(route.emptyPatch);
  if (route.body) {
    const code = route.bodyError ?? 'bad_request';
    if (body === undefined && !route.bodyOptional) {
      throw AppError.validation(code, [{ path: [], message: 'A JSON body is required.', code: 'invalid_type' }]);
    }
    // A text body (route.textBody) is the handler's to parse and judge.
    if (!(route.textBody && typeof body === 'string')) {
      // PostgreSQL text cannot hold U+0000; refuse it here as the invalid input it is.
      const nul = nulPaths(body);
      if (nul.length) {
        throw AppError.validation(code, nul.map((path) => ({ path, message: 'Must not contain the NUL character (U+0000).', code: 'invalid_string' })));
      }
      body = parseOrThrow(route.body, body === undefined ? {} : body, code);
    }
  }
  const query = route.query ? parseOrThrow(route.query, { ...rawQuery }, route.queryError ?? 'bad_request') : {};
  return { body, query };
}

/** Establishes who is calling a route (a v1 token, or the admin secret on the admin listener). */
export type Authenticate = (req: Request, route: RouteDef) => Promise<Principal>;

/**
 * Serves the route table: authenticate and authorize (role) → edge hooks → validate → handler →
 * envelope. The role is judged from the token alone, before the body is read or an idempotent
 * answer replayed: a token that may not write learns nothing about the body or another's answer.
 *
 * One Express router over the table, in table order, mounted at the prefix: one trailing slash
 * allowed, case-sensitive below the prefix, HEAD by the GET route, parameters decoded with
 * decodeURIComponent, anything unmatched passed on (router.test.ts checks it over the real tables).
 * Each route is one handler (`inSequence`), not a layer per step. A radix-tree dispatcher
 * (find-my-way) in its place measured 2-11 % less CPU per request here, under the 10 % a replaced
 * mechanism must gain to stay (docs/performance.md, "Workarounds").
 */
export function buildRouter(routes: RouteDef[], authenticate: Authenticate, options: RouterOptions): RouteDispatcher {
  const { prefix } = options;
  const router = Router({ caseSensitive: true, strict: false });
  const served: { method: string; path: string }[] = [];
  for (const route of routes) {
    const identify = async (req: Request, res: Response, next: NextFunction) => {
      // The body reader takes this media type as text, besides JSON.
      res.locals.textBody = route.textBody?.mediaType;
      if (route.auth === 'none') return next();
      try {
        const principal = await authenticate(req, route);
        res.locals.principal = principal;
        // Still counted against the team's budget by the hooks; sent after them.
        const refused = roleRefusal(route, principal);
        if (refused) res.locals.authError = refused;
        next();
      } catch (error) {
        res.locals.authError = error;
        // Hooks still run (an unauthenticated request is rate limited per address), then the error is sent.
        next();
      }
    };
    const handle = async (req: Request, res: Response) => {
      if (res.locals.authError) throw res.locals.authError;
      const malformed = malformedParam(req.params as Record<string, string>, route);
      if (malformed) throw malformed;
      if (res.locals.bodyError) throw res.locals.bodyError;
      const principal = res.locals.principal as Principal;
      const { body, query } = validatedInput(route, res.locals.body, req.query);
      const reply = await route.handler({
        params: req.params as Record<string, string>,
        body,
        query,
        principal,
        // The whole path as sent, prefix included (the mount's part and the rest).
        keyedId: (prefix, part = '') => idempotentId(prefix, principal.teamId, `${req.baseUrl}${req.path}${part}`, req.headers['idempotency-key']),
        caller: route.auth === 'none' ? { requestId: res.locals.requestId as string } : callerOf(principal, res.locals.requestId as string),
        prefetched: res.locals.prefetched as Promise<unknown> | undefined,
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
    const path = expressPath(route.path);
    const run = inSequence([identify, ...(options.before ?? []), handle]);
    const label = `${prefix}${routeTemplate(route.path)}`;
    router[route.method](path, (req, res, next) => {
      if (options.labelRoutes) setHttpRoute(res, label);
      if (route.prefetch) res.locals.prefetched = route.prefetch(req);
      run(req, res, next);
    });
    served.push({ method: route.method.toUpperCase(), path: `${prefix}${path}` });
  }
  const mounted = Router();
  mounted.use(prefix || '/', router);
  return Object.assign(mounted as RequestHandler, { served });
}

/**
 * The steps of one route as a single handler: each step's `next()` runs the one after it, an error
 * (passed to `next`, thrown, or a rejected promise) goes to Express's error handling as it would
 * from separate layers. One handler instead of a layer per step: Express's per-layer dispatch
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
