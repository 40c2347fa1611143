import type { Request } from 'express';
import { describe, expect, it } from 'vitest';
import { AppError } from '@rundown/shared/core';
import { presentedToken } from './authenticate.js';

const req = (headers: Record<string, string>, query: Record<string, unknown> = {}, rawHeaders = Object.entries(headers).flat()) =>
  ({ headers, query, rawHeaders }) as unknown as Request;

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (error) {
    return error instanceof AppError ? error.code : 'not an AppError';
  }
}

describe('presentedToken', () => {
  it('takes "Bearer <token>" from the header in every mode', () => {
    for (const mode of ['bearer', 'control'] as const) {
      expect(presentedToken(req({ authorization: 'Bearer abc.def.ghi' }), mode)).toBe('abc.def.ghi');
      expect(presentedToken(req({ authorization: 'bearer abc' }), mode)).toBe('abc');
    }
  });

  it('refuses a wrong scheme or an empty value as auth.malformed_authorization', () => {
    for (const value of ['Basic abc', 'Bearer', 'Bearer ', 'abc', 'Token abc', 'Bearer a b']) {
      expect(codeOf(() => presentedToken(req({ authorization: value }), 'bearer')), value).toBe('auth.malformed_authorization');
    }
  });

  it('refuses more than one Authorization header, even two copies of one token, rather than pick one', () => {
    const two = ['Authorization', 'Bearer abc', 'authorization', 'Bearer abc'];
    for (const mode of ['bearer', 'control'] as const) {
      expect(codeOf(() => presentedToken(req({ authorization: 'Bearer abc' }, {}, two), mode))).toBe('auth.malformed_authorization');
    }
    expect(presentedToken(req({ authorization: 'Bearer abc' }, {}, ['AUTHORIZATION', 'Bearer abc', 'X-Authorization', 'x']), 'bearer')).toBe('abc');
  });

  it('does not fall back to the query token when the header is malformed, even on the control surface', () => {
    expect(codeOf(() => presentedToken(req({ authorization: 'Basic x' }, { token: 'good' }), 'control'))).toBe('auth.malformed_authorization');
  });

  it('accepts ?token= on the control surface only', () => {
    expect(presentedToken(req({}, { token: 'q.t.k' }), 'control')).toBe('q.t.k');
    expect(codeOf(() => presentedToken(req({}, { token: 'q.t.k' }), 'bearer'))).toBe('auth.query_token_not_allowed');
  });

  it('refuses an empty or repeated query token on the control surface as malformed', () => {
    expect(codeOf(() => presentedToken(req({}, { token: '' }), 'control'))).toBe('auth.malformed_authorization');
    expect(codeOf(() => presentedToken(req({}, { token: ['a', 'b'] }), 'control'))).toBe('auth.malformed_authorization');
  });

  it('prefers the header when both are sent on the control surface', () => {
    expect(presentedToken(req({ authorization: 'Bearer head' }, { token: 'query' }), 'control')).toBe('head');
  });

  it('answers auth.token_missing when nothing is presented', () => {
    expect(codeOf(() => presentedToken(req({}), 'bearer'))).toBe('auth.token_missing');
    expect(codeOf(() => presentedToken(req({}), 'control'))).toBe('auth.token_missing');
  });
});
