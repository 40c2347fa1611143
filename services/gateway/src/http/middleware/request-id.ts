import type { RequestHandler } from 'express';
import { newRequestId } from '@rundown/shared/core';

/** Every answer carries a fresh request id; errors and `meta` quote the same one. */
export const requestId: RequestHandler = (_req, res, next) => {
  const id = newRequestId();
  res.locals.requestId = id;
  res.setHeader('X-Request-Id', id);
  next();
};
