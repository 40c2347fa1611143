import { randomBytes } from 'node:crypto';
import type { RequestHandler } from 'express';

/** Every answer carries a fresh request id; errors and `meta` quote the same one. */
export const requestId: RequestHandler = (_req, res, next) => {
  const id = `req_${randomBytes(12).toString('hex')}`;
  res.locals.requestId = id;
  res.setHeader('X-Request-Id', id);
  next();
};
