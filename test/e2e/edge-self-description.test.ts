import { compileErrors, validate } from '@readme/openapi-parser';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, createTeam, system, v1 } from '../support/client.js';
import { expectProblem, expectRateLimitHeaders } from '../support/problems.js';

type Operation = { 'x-error-codes': string[]; security?: unknown[] };
let document: { openapi: string; servers: { url: string }[]; paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, unknown> } };

beforeAll(async () => {
  const res = await call(`${system().baseUrl}/openapi.json`, 'GET');
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expectRateLimitHeaders(res);
  document = res.body;
});

const concrete = (path: string) => path.replace(/\{(\w+)\}/g, 'x_$1');

describe('{base_url}/openapi.json', () => {
  it('is public and a valid OpenAPI 3.1 document (@readme/openapi-parser)', async () => {
    expect(document.openapi).toBe('3.1.0');
    expect(document.servers[0]!.url).toBe(system().baseUrl);
    expect(document.components.schemas.Problem).toBeDefined();
    const result = await validate(structuredClone(document) as never);
    expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);
  });

  it('describes only routes the gateway serves: each documented operation answers, not with a route-level 404/405', async () => {
    for (const [path, ops] of Object.entries(document.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const res = await call(`${system().baseUrl}${concrete(path)}`, method.toUpperCase());
        expect(res.body?.code, `${method} ${path}`).not.toBe('not_found');
        expect(res.status, `${method} ${path}`).not.toBe(405);
        if (op.security?.length === 0) expect(res.status).toBe(200);
        else expectProblem(res, 401, 'auth.token_missing');
      }
    }
  });

  it('lists, for a route, the codes the system really answers it with', async () => {
    const team = await createTeam();
    const viewer = await team.token('VIEW');
    const owner = await team.token('OWNER');
    const codes = document.paths['/rundowns']!.post!['x-error-codes'];
    const seen = [
      (await v1('POST', '/rundowns')).body.code,
      (await v1('POST', '/rundowns', { query: { token: owner } })).body.code,
      (await v1('POST', '/rundowns', { token: viewer, body: { title: 'x' } })).body.code,
      (await v1('POST', '/rundowns', { token: owner, body: {} })).body.code,
      (await v1('POST', '/rundowns', { token: owner, rawBody: 'title=x', headers: { 'content-type': 'text/plain' } })).body.code,
      (await v1('POST', '/rundowns', { token: owner, body: { title: 'x' }, headers: { 'idempotency-key': 'k'.repeat(300) } })).body.code,
    ];
    expect(seen).toEqual(['auth.token_missing', 'auth.query_token_not_allowed', 'forbidden', 'rundowns.invalid_payload', 'unsupported_media_type', 'idempotency.invalid_key']);
    for (const code of seen) expect(codes).toContain(code);
  });
});

describe('{docs_url} and the error reference', () => {
  it('serves the API reference at {docs_url}: scripts from this origin only, under a strict CSP (docs-browser.test.ts renders it)', async () => {
    const res = await call(`${system().publicUrl}/docs`, 'GET');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('content-security-policy')).toMatch(/default-src 'none'; script-src 'self';/);
    expectRateLimitHeaders(res);
    expect(res.text).toContain(`href="${system().baseUrl}/openapi.json"`);
    expect(res.text).toContain(`href="${system().publicUrl}/docs/api-v1/errors"`);
    const scripts = [...res.text.matchAll(/<script[^>]*src="([^"]+)"/g)].map(([, src]) => src!);
    expect(scripts).toEqual(['/docs/assets/scalar-api-reference.js', '/docs/assets/init.js']);
    for (const src of scripts) {
      const asset = await call(`${system().publicUrl}${src}`, 'GET');
      expect(asset.status, src).toBe(200);
      expect(asset.headers.get('content-type'), src).toMatch(/^text\/javascript/);
    }
    for (const doc of ['/docs/api-v0/openapi.json', '/docs/events/asyncapi.json']) {
      const res = await call(`${system().publicUrl}${doc}`, 'GET');
      expect(res.status, doc).toBe(200);
      expect(res.body.openapi ?? res.body.asyncapi, doc).toMatch(/^3\./);
    }
  });

  it('resolves every problem’s type and documentation_url to an anchor of the error reference, spec_url to the document', async () => {
    const answers = [
      await v1('GET', '/auth'),
      await v1('GET', '/auth', { token: 'x' }),
      await v1('GET', '/nowhere'),
      await v1('PUT', '/rundowns'),
      await call(`${system().publicUrl}/outside`, 'GET'),
    ];
    const pages = new Map<string, string>();
    for (const res of answers) {
      const type = new URL(res.body.type);
      expect(res.body.documentation_url).toBe(res.body.type);
      expect(type.hash).toBe(`#${res.body.code}`);
      const pageUrl = type.href.replace(type.hash, '');
      if (!pages.has(pageUrl)) {
        const page = await call(pageUrl, 'GET');
        expect(page.status).toBe(200);
        expect(page.headers.get('content-type')).toMatch(/^text\/html/);
        pages.set(pageUrl, page.text);
      }
      expect(pages.get(pageUrl)).toContain(`id="${res.body.code}"`);
      const spec = await call(res.body.spec_url, 'GET');
      expect(spec.body.openapi).toBe('3.1.0');
    }
  });

  it('has one anchor per catalogue code, the same set the OpenAPI document names', async () => {
    const page = await call(`${system().publicUrl}/docs/api-v1/errors`, 'GET');
    const anchors = [...page.text.matchAll(/<section id="([^"]+)">/g)].map(([, id]) => id);
    expect(new Set(anchors).size).toBe(anchors.length);
    const catalogue = (document.components.schemas.Problem as { properties: { code: { enum: string[] } } }).properties.code.enum;
    expect([...anchors].sort()).toEqual([...catalogue].sort());
    for (const code of ['auth.token_missing', 'auth.malformed_authorization', 'auth.invalid_token', 'auth.token_expired', 'auth.token_revoked', 'auth.revocation_check_unavailable', 'auth.query_token_not_allowed', 'rate_limit.exceeded', 'idempotency.key_mismatch', 'idempotency.cache_corrupt']) {
      expect(anchors).toContain(code);
    }
    const rate = page.text.slice(page.text.indexOf('<section id="rate_limit.exceeded">'));
    expect(rate.slice(0, rate.indexOf('</section>'))).toMatch(/429 Too Many Requests[\s\S]*<code>retry_after_seconds<\/code>[\s\S]*Retry-After/);
  });

  it('answers a wrong method on the static routes with 405', async () => {
    const res = await call(`${system().baseUrl}/openapi.json`, 'POST');
    expectProblem(res, 405, 'method_not_allowed');
    expect(res.headers.get('allow')).toBe('GET, HEAD');
  });
});
