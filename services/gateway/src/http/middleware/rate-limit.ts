import type { Request, RequestHandler, Response } from 'express';
import { AppError } from '@rundown/shared/core';
import { RATE_WINDOW_SECONDS, teamBucket, type Bucket, type Decision, type RateLimiter } from '../../edge/rate-limiter.js';

/** The budget a request counts against: its team's when the token verified, its address's otherwise. */
export function bucketOf(req: Request, res: Response, anonymousLimit: number): Bucket {
  const principal = res.locals.principal;
  if (principal) {
    return { key: teamBucket(principal.teamId), limit: principal.team.rate_limit_per_minute, tier: principal.team.plan };
  }
  return { key: `ip:${req.ip ?? req.socket.remoteAddress ?? 'unknown'}`, limit: anonymousLimit, tier: 'anonymous' };
}

export function rateLimitHeaders(decision: Decision): Record<string, string> {
  return {
    'RateLimit-Limit': String(decision.limit),
    'RateLimit-Remaining': String(decision.remaining),
    'RateLimit-Reset': String(decision.resetSeconds),
  };
}

export function setRateLimitHeaders(res: Response, decision: Pick<Decision, 'limit' | 'remaining' | 'resetSeconds'>): void {
  res.setHeader('RateLimit-Limit', String(decision.limit));
  res.setHeader('RateLimit-Remaining', String(decision.remaining));
  res.setHeader('RateLimit-Reset', String(decision.resetSeconds));
}

export function exceeded(decision: Decision): AppError {
  const retry = decision.resetSeconds;
  return new AppError('rate_limit.exceeded', {
    detail:
      decision.tier === 'anonymous'
        ? `This address used its ${decision.limit} unauthenticated requests for this minute; retry in ${retry} s.`
        : `The team used its ${decision.limit} requests for this minute (${decision.tier} plan); retry in ${retry} s.`,
    details: { tier: decision.tier, limit: decision.limit, window_seconds: RATE_WINDOW_SECONDS, retry_after_seconds: retry },
    headers: { 'Retry-After': String(retry) },
  });
}

/**
 * Counts the request and sets `RateLimit-Limit/Remaining/Reset` before anything else can answer,
 * so every answer (success, problem, 404) carries them; over the budget it answers 429 with
 * `Retry-After`. Runs once per request even if mounted twice.
 */
export function rateLimit(limiter: RateLimiter, anonymousLimit: number): RequestHandler {
  return (req, res, next) => {
    if (res.locals.rateLimited) return next();
    res.locals.rateLimited = true;
    const apply = (decision: Decision) => {
      setRateLimitHeaders(res, decision);
      if (!decision.allowed) return next(exceeded(decision));
      next();
    };
    // A verified token's team budget was already counted, in the authenticator's one Redis round
    // trip: applied at once, without a promise (each one costs more under the tracer's async context).
    const counted = res.locals.principal?.rate;
    if (counted) return apply(counted);
    return limiter.decide(bucketOf(req, res, anonymousLimit)).then(apply);
  };
}
