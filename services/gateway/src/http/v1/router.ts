import { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { AppError, roleAtLeast } from '@rundown/shared';
import { callerOf, type Principal } from '../../edge/authenticator.js';
import { sendData } from '../envelope.js';
import { expressPath, parseOrThrow, type RouteDef } from '../route.js';

export interface EdgeHooks {
  /** Runs after authentication (principal may be absent on failure) and before the route: rate limits, idempotency. */
  before?: RequestHandler[];
}

const isEmptyObject = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0;

/** Establishes who is calling a route (a v1 token, or the admin secret on the admin listener). */
export type Authenticate = (req: Request, route: RouteDef) => Promise<Principal>;

/**
 * Mounts the route table: authenticate → edge hooks → validate → role → handler → envelope.
 * Validation precedes the role check (the request is understood before it is judged).
 */
export function buildRouter(routes: RouteDef[], authenticate: Authenticate, hooks: EdgeHooks = {}): Router {
  const router = Router({ strict: false, caseSensitive: true });
  for (const route of routes) {
    const identify = async (req: Request, res: Response, next: NextFunction) => {
      if (route.auth === 'none') return next();
      try {
        res.locals.principal = await authenticate(req, route);
        next();
      } catch (error) {
        res.locals.authError = error;
        // Hooks still run (an unauthenticated request is rate limited per address), then the error is sent.
        next();
      }
    };
    const handle = async (req: Request, res: Response) => {
      if (res.locals.authError) throw res.locals.authError;
      const principal = res.locals.principal as Principal;
      let body: unknown = res.locals.body;
      if (route.emptyPatch && (body === undefined || isEmptyObject(body))) throw new AppError(route.emptyPatch);
      if (route.body) {
        if (body === undefined && !route.bodyOptional) {
          throw AppError.validation(route.bodyError ?? 'bad_request', [
            { path: [], message: 'A JSON body is required.', code: 'invalid_type' },
          ]);
        }
        body = parseOrThrow(route.body, body ?? {}, route.bodyError ?? 'bad_request');
      }
      const query = route.query ? parseOrThrow(route.query, { ...req.query }, route.queryError ?? 'bad_request') : {};
      if (route.role && !roleAtLeast(principal.role, route.role)) {
        throw new AppError('forbidden', { detail: `This operation needs the ${route.role} role; the token has ${principal.role}.` });
      }
      const reply = await route.handler({
        params: req.params as Record<string, string>,
        body,
        query,
        principal,
        caller: route.auth === 'none' ? { requestId: res.locals.requestId as string } : callerOf(principal, res.locals.requestId as string),
        req,
        res,
      });
      if ('raw' in reply) return;
      if (reply.status === 204) {
        res.status(204).end();
        return;
      }
      sendData(res, reply.data, {
        status: reply.status ?? 200,
        ...(reply.location ? { location: reply.location } : {}),
        ...(reply.included ? { included: reply.included } : {}),
        ...(reply.sideEffects ? { sideEffects: reply.sideEffects } : {}),
      });
    };
    router[route.method](expressPath(route.path), identify, ...(hooks.before ?? []), handle);
  }
  return router;
}
