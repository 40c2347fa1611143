import { randomFillSync } from 'node:crypto';
import type { RequestHandler } from 'express';

// Random bytes drawn 4 KiB at a time: one `randomFillSync` per 341 ids instead of one per request
// (it profiled at 3% of the gateway's time under load).
const POOL_IDS = 341;
const ID_BYTES = 12;
const pool = Buffer.alloc(POOL_IDS * ID_BYTES);
let next = POOL_IDS;

/** `req_` and 24 hex digits (96 random bits). */
export function newRequestId(): string {
  if (next === POOL_IDS) {
    randomFillSync(pool);
    next = 0;
  }
  const start = next++ * ID_BYTES;
  return `req_${pool.toString('hex', start, start + ID_BYTES)}`;
}

/** Every answer carries a fresh request id; errors and `meta` quote the same one. */
export const requestId: RequestHandler = (_req, res, next) => {
  const id = newRequestId();
  res.locals.requestId = id;
  res.setHeader('X-Request-Id', id);
  next();
};
