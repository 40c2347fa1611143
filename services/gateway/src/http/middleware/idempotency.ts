import type { RequestHandler, Response } from 'express';
import { AppError, limits, type Logger } from '@rundown/shared/core';
import { fingerprint, type IdempotencyStore, type StoredResponse } from '../../edge/idempotency.js';
import { WRITE_METHODS, type Method } from '../route.js';

/** The headers a replay repeats (besides status and body); X-Request-Id keeps body and header equal. */
const REPLAYED_HEADERS = ['content-type', 'location', 'x-request-id'] as const;

/** 2xx and 4xx answers are kept; 5xx are not, so a retry with the same key runs again (docs/api-decisions.md#idempotency). */
export const cacheable = (status: number) => status >= 200 && status < 500;

function replay(res: Response, stored: StoredResponse): void {
  res.status(stored.status);
  for (const [name, value] of Object.entries(stored.headers)) res.setHeader(name, value);
  res.setHeader('Idempotent-Replayed', 'true');
  res.end(stored.body);
}

/**
 * `Idempotency-Key` on v1 writes, scoped to (team, key), safe across replicas: the first request
 * claims the key in Redis and its answer is stored for 24 h; a repeat gets that answer again with
 * `Idempotent-Replayed: true`; a repeat while it runs is 409 `idempotency.in_flight`; the same key
 * with another method, path or body is 422 `idempotency.key_mismatch`. Runs after authentication
 * and the body parser (the fingerprint covers the canonical body).
 */
export function idempotency(store: IdempotencyStore, logger: Logger): RequestHandler {
  return async (req, res, next) => {
    if (!WRITE_METHODS.has(req.method.toLowerCase() as Method) || res.locals.authError) return next();
    const principal = res.locals.principal;
    const key = req.headers['idempotency-key'];
    if (!principal || key === undefined) return next();
    if (typeof key !== 'string' || key.length === 0 || key.length > limits.idempotencyKeyChars) {
      const length = typeof key === 'string' ? key.length : 0;
      throw new AppError('idempotency.invalid_key', {
        detail: `An Idempotency-Key is 1 to ${limits.idempotencyKeyChars} characters; this one has ${length}.`,
        details: { key_length: length, max: limits.idempotencyKeyChars },
      });
    }
    const redisKey = store.keyOf(principal.teamId, key);
    const fp = fingerprint(req.method, req.originalUrl.split('?')[0]!, res.locals.body, res.locals.rawBody);
    const claim = await store.claim(redisKey, fp).catch((err: unknown) => {
      logger.warn({ err, request_id: res.locals.requestId }, 'idempotency store unavailable');
      throw new AppError('service_unavailable', { detail: 'The idempotency store did not answer; retry with the same key.' });
    });
    if (claim.outcome === 'corrupt') throw new AppError('idempotency.cache_corrupt');
    if (claim.outcome !== 'acquired' && claim.fingerprint !== fp) {
      throw new AppError('idempotency.key_mismatch', {
        detail: 'This Idempotency-Key was already used with a different method, path or body; use a fresh key.',
      });
    }
    if (claim.outcome === 'in_flight') throw new AppError('idempotency.in_flight');
    if (claim.outcome === 'done') return replay(res, claim.response);

    // Ours: whatever answer this request ends with is stored (or the claim dropped) before it is sent.
    const end = res.end.bind(res) as (...args: unknown[]) => Response;
    let settled = false;
    res.end = ((...args: unknown[]) => {
      if (settled) return end(...args);
      settled = true;
      const [chunk] = args;
      const body = typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('utf8') : '';
      const status = res.statusCode;
      const headers: Record<string, string> = {};
      for (const name of REPLAYED_HEADERS) {
        const value = res.getHeader(name);
        if (value !== undefined) headers[name] = String(value);
      }
      const settle = cacheable(status)
        ? store.complete(redisKey, claim.owner, fp, { status, headers, body })
        : store.release(redisKey, claim.owner);
      settle
        .catch((err: unknown) => logger.warn({ err, request_id: res.locals.requestId }, 'could not settle an idempotency key'))
        .finally(() => end(...args));
      return res;
    }) as Response['end'];
    next();
  };
}
