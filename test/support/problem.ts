import { expect } from 'vitest';
import { system } from './client.js';

/** Asserts a problem+json answer with the given status and catalogue code, and every RFC 9457 member. */
export function expectProblem(res: { status: number; headers: Headers; body: any }, status: number, code: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body.code).toBe(code);
  expect(res.body.status).toBe(status);
  expect(res.body.request_id).toBe(res.headers.get('x-request-id'));
  expect(res.body.type).toBe(`${system().publicUrl}/docs/api-v1/errors#${code}`);
  expect(res.body.documentation_url).toBe(res.body.type);
  expect(res.body.spec_url).toBe(`${system().baseUrl}/openapi.json`);
  expect(typeof res.body.server_time).toBe('number');
  expect(typeof res.body.title).toBe('string');
  expect(typeof res.body.detail).toBe('string');
}
