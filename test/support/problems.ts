import { expect } from 'vitest';
import { system, type ApiResponse } from './client.js';

/** A v1 problem+json answer with every field of the contract, and the RateLimit headers every answer carries. */
export function expectProblem(res: ApiResponse, status: number, code: string, publicUrl = system().publicUrl): void {
  expect(res.status, res.text).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body.code).toBe(code);
  expect(res.body.status).toBe(status);
  expect(res.body.request_id).toBe(res.headers.get('x-request-id'));
  expect(res.body.type).toBe(`${publicUrl}/docs/api-v1/errors#${code}`);
  expect(res.body.documentation_url).toBe(res.body.type);
  expect(res.body.spec_url).toBe(`${publicUrl}/v1/openapi.json`);
  expect(typeof res.body.detail).toBe('string');
  expectRateLimitHeaders(res);
}

export function expectRateLimitHeaders(res: ApiResponse): void {
  for (const name of ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']) {
    expect(res.headers.get(name), `${name} on ${res.status} ${res.text.slice(0, 200)}`).toMatch(/^\d+$/);
  }
}
