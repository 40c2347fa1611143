import express, { type Request, type Response, type Router } from 'express';
import { z } from 'zod';
import { AppError, couldBeId, knownErrorOf, type CallerContext, type Logger, type V0Principal, type V0RateLimiter, type V0TokenVerifier } from '@rundown/shared/core';
import type { ActRequest } from '@rundown/shared/proto/rundown/runner/v1/runner';
import type { Clients } from '../../edge/clients.js';
import type { RateLimiter } from '../../edge/rate-limiter.js';
import { presentedToken } from '../middleware/authenticate.js';
import { jsonBody } from '../middleware/body.js';
import { setRateLimitHeaders } from '../middleware/rate-limit.js';
import { patchOutputMessageBody } from '../../wire/schemas/output-message.js';

export interface V0Options {
  clients: Clients;
  verifier: V0TokenVerifier;
  /** The team's v0 budget (sliding window, shared with the realtime service's connections). */
  limiter: V0RateLimiter;
  /** Requests without a valid v0 token count against their address, as on v1. */
  anonymousLimiter: RateLimiter;
  anonymousLimit: number;
  logger: Logger;
}

/** The v0 error body (docs/api-decisions.md#v0): `{ ok: false, error, code }` with the v1 code. */
function sendError(res: Response, error: unknown, logger: Logger): void {
  const e = knownErrorOf(error) ?? new AppError('internal.unhandled');
  if (e.code === 'internal.unhandled') logger.error({ err: error, request_id: res.locals.requestId }, 'unhandled v0 error');
  const message = e.code.startsWith('auth.')
    ? 'Invalid API token'
    : e.code === 'rundowns.not_found'
      ? "Rundown doesn't exist"
      : e.message;
  for (const [name, value] of Object.entries(e.headers ?? {})) res.setHeader(name, value);
  res.status(e.status).json({ ok: false, error: message, code: e.code });
}

export const amountQuery = z.coerce.number().int().positive().max(604_800_000);

/** The v0 surface (docs/api-decisions.md#v0) as data: the router below and the v0 OpenAPI document (./openapi.ts) both read these. */
export const V0_ACTIONS = ['start', 'pause', 'next', 'previous', 'end'] as const;
export const V0_ADJUSTMENTS = [
  ['add', 1],
  ['subtract', -1],
] as const;
export const V0_VISIBILITY = [
  ['show', true],
  ['hide', false],
  ['toggle', undefined],
] as const;

type Handler = (ctx: { id: string; req: Request; res: Response; caller: CallerContext }) => Promise<void>;

/**
 * The deprecated v0 HTTP API under `/api-v0/rundown` (docs/api-decisions.md#v0), frozen: each request is
 * authenticated (v0 tokens only), counted against the team's sliding 60/min budget (headers on
 * every answer), then mapped onto the runner and the output message exactly as v1 does.
 */
export function v0Router(options: V0Options): Router {
  const { clients, logger } = options;
  const router = express.Router({ caseSensitive: true, strict: false });

  // Authenticate and count every request first (unknown paths too): the headers are on every answer.
  router.use(async (req, res, next) => {
    let principal: V0Principal | undefined;
    let authError: unknown;
    try {
      principal = await options.verifier.verify(presentedToken(req, 'control'));
    } catch (error) {
      authError = error;
    }
    try {
      if (principal) {
        const decision = await options.limiter.consume(principal.teamId);
        setRateLimitHeaders(res, decision);
        if (!decision.allowed) {
          throw new AppError('rate_limit.exceeded', {
            detail: `The team used its ${decision.limit} v0 requests for this minute; retry in ${decision.resetSeconds} s.`,
            headers: { 'Retry-After': String(decision.resetSeconds) },
          });
        }
      } else {
        const bucket = { key: `ip:${req.ip ?? req.socket.remoteAddress ?? 'unknown'}`, limit: options.anonymousLimit, tier: 'anonymous' as const };
        const decision = await options.anonymousLimiter.decide(bucket);
        setRateLimitHeaders(res, decision);
        if (!decision.allowed) {
          throw new AppError('rate_limit.exceeded', { headers: { 'Retry-After': String(decision.resetSeconds) } });
        }
        throw authError;
      }
    } catch (error) {
      return sendError(res, error, logger);
    }
    res.locals.v0 = principal;
    next();
  });

  const route = (method: 'get' | 'post' | 'patch', path: string, handler: Handler) => {
    router[method](path, async (req, res) => {
      const principal = res.locals.v0 as V0Principal;
      // A v0 token speaks for its whole team; show control and the output message need EDIT at most.
      const caller: CallerContext = { requestId: res.locals.requestId as string, teamId: principal.teamId, role: 'EDIT', tokenId: principal.tokenId };
      try {
        const id = String(req.params.id);
        // An id that could never be one is not found here; it never travels to a service.
        if (!couldBeId(id)) throw new AppError('rundowns.not_found');
        await handler({ id, req, res, caller });
      } catch (error) {
        sendError(res, error, logger);
      }
    });
  };
  const ok = (res: Response) => res.status(200).json({ ok: true });
  const act = async (id: string, action: ActRequest['action'], caller: CallerContext) => {
    await clients.runner.act({ rundown_id: id, action }, caller);
  };

  for (const verb of V0_ACTIONS) {
    route('get', `/:id/${verb}`, async ({ id, res, caller }) => {
      await act(id, { $case: verb, value: {} }, caller);
      ok(res);
    });
  }
  for (const [name, sign] of V0_ADJUSTMENTS) {
    route('get', `/:id/cues/active/${name}`, async ({ id, req, res, caller }) => {
      const amount = amountQuery.safeParse(req.query.amount);
      if (!amount.success) {
        throw AppError.validation('bad_request', [{ path: ['amount'], message: 'amount must be a positive whole number of milliseconds', code: 'invalid_amount' }]);
      }
      await act(id, { $case: 'adjust_duration', value: { delta_ms: sign * amount.data } }, caller);
      ok(res);
    });
  }
  for (const [name, visible] of V0_VISIBILITY) {
    route('post', `/:id/output-message/${name}`, async ({ id, res, caller }) => {
      const next = visible ?? !(await clients.outputMessage.getOutputMessage({ rundown_id: id }, caller)).visible;
      await clients.outputMessage.updateOutputMessage({ rundown_id: id, visible: next }, caller);
      ok(res);
    });
  }
  router.patch('/:id/output-message', jsonBody);
  route('patch', '/:id/output-message', async ({ id, res, caller }) => {
    if (res.locals.bodyError) throw res.locals.bodyError;
    const parsed = patchOutputMessageBody.safeParse(res.locals.body ?? {});
    if (!parsed.success) {
      throw AppError.validation(
        'messages.invalid_payload',
        parsed.error.issues.map((i) => ({ path: i.path.map((p) => (typeof p === 'symbol' ? String(p) : p)), message: i.message, code: i.code })),
      );
    }
    if (Object.keys(parsed.data).length === 0) throw new AppError('messages.empty_patch');
    await clients.outputMessage.updateOutputMessage({ rundown_id: id, ...parsed.data }, caller);
    ok(res);
  });

  const known: [RegExp, string][] = [
    [/^\/[^/]+\/(start|pause|next|previous|end)\/?$/, 'GET'],
    [/^\/[^/]+\/cues\/active\/(add|subtract)\/?$/, 'GET'],
    [/^\/[^/]+\/output-message\/(show|hide|toggle)\/?$/, 'POST'],
    [/^\/[^/]+\/output-message\/?$/, 'PATCH'],
  ];
  router.use((req, res) => {
    const allow = known.find(([pattern]) => pattern.test(req.path))?.[1];
    if (allow) {
      res.setHeader('Allow', allow);
      return sendError(res, new AppError('method_not_allowed', { headers: { Allow: allow } }), logger);
    }
    sendError(res, new AppError('not_found'), logger);
  });
  return router;
}
