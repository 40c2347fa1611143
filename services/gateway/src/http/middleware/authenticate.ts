import type { Request } from 'express';
import { AppError } from '@rundown/shared/core';
import type { AuthMode } from '../route.js';

const BEARER = /^Bearer +([^\s]+) *$/i;

/**
 * How many Authorization fields the request carried. Node keeps the first of several in
 * `req.headers` and drops the rest without a word; the raw list has them all.
 */
function authorizationFields(rawHeaders: string[]): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length === 13 && name.toLowerCase() === 'authorization') count++;
  }
  return count;
}

/**
 * Finds the presented token following the v1 rules: the Authorization header must be exactly
 * `Bearer <token>`, given once (two of them, even two copies of one token, are never chosen
 * between); a malformed header is an error of its own (the query token is then no fallback);
 * `?token=` counts only on the control surface.
 */
export function presentedToken(req: Request, mode: AuthMode): string {
  const header = req.headers.authorization;
  if (header !== undefined) {
    if (authorizationFields(req.rawHeaders) > 1) {
      throw new AppError('auth.malformed_authorization', { detail: 'Give the Authorization header once.' });
    }
    const match = BEARER.exec(header);
    if (!match?.[1]) throw new AppError('auth.malformed_authorization');
    return match[1];
  }
  // Read only without the header: Express 5 parses the query string again on every `req.query`.
  const query = req.query.token;
  if (query !== undefined) {
    if (mode !== 'control') throw new AppError('auth.query_token_not_allowed');
    if (typeof query !== 'string' || query === '') {
      throw new AppError('auth.malformed_authorization', { detail: 'Give the token query parameter once, with a non-empty value.' });
    }
    return query;
  }
  throw new AppError('auth.token_missing');
}
