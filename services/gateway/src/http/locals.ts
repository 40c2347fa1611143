import type { AppError } from '@rundown/shared/core';
import type { Principal } from '../edge/authenticator.js';

/**
 * What the public listener's pipeline keeps on `res.locals`, step by step (request id → authentication
 * → rate limit → body → idempotency → route). Declared once here so every step reads a typed value.
 */
declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Locals {
      /** Set first, by `requestId`; quoted by every answer. */
      requestId: string;
      /** The verified caller (and, for a v1 token, its rate-limit decision), once authentication ran. */
      principal?: Principal;
      /** Why authentication or the role check failed; sent after the rate limit has counted the request. */
      authError?: unknown;
      /** The request was counted against a budget (the limiter runs once even where mounted twice). */
      rateLimited?: boolean;
      /** The parsed JSON body, when there was one and it parsed. */
      body?: unknown;
      /** The body's text when it was read but is not acceptable JSON (kept for the idempotency fingerprint). */
      rawBody?: string;
      /** The body's problem, raised by the route after the idempotency step. */
      bodyError?: AppError;
    }
  }
}

export {};
