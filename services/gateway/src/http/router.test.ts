import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '@rundown/shared/core';
import type { Principal } from '../edge/authenticator.js';
import { adminRoutes } from './admin/routes.js';
import { defineRoute, type Method, type RouteDef } from './route.js';
import { v1Routes } from './v1/index.js';
import { buildRouter } from './router.js';

// The router's answers, pinned: matching, table order, the prefix, decoding, failures, and the ids an
// Idempotency-Key derives from the path (stored ids must not change).
const route = (method: Method, path: string, name: string): RouteDef =>
  defineRoute({ method, path, summary: name, tag: 't', auth: 'none', handler: async ({ params }) => ({ data: { name, params } }) });

const principal: Principal = {
  tokenId: 'tok_1',
  teamId: 'team_1',
  role: 'OWNER',
  rundownId: undefined,
  issuedAt: 0,
  expiresAt: 0,
  environment: 'test',
  team: { plan: 'paid', rate_limit_per_minute: 100, max_rundowns: 10 },
};

const table = [
  route('get', '/rundowns', 'list'),
  route('post', '/rundowns', 'create'),
  route('get', '/rundowns/{id}', 'one'),
  route('get', '/rundowns/{id}/status', 'status'),
  route('get', '/rundowns/{id}/{what}', 'first of two that match'),
  route('post', '/rundowns/{id}/action:next', 'next'),
  route('delete', '/rundowns/{id}/cues/{cue_id}', 'delete cue'),
  defineRoute({
    method: 'post',
    path: '/rundowns/{id}/cues',
    summary: 'keyed create',
    tag: 't',
    auth: 'bearer',
    handler: async ({ keyedId }) => ({ data: { id: keyedId('cue'), second: keyedId('cue', '/1') } }),
  }),
  defineRoute({
    method: 'get',
    path: '/boom',
    summary: 'fails',
    tag: 't',
    auth: 'none',
    handler: async () => Promise.reject(new AppError('internal', { detail: 'rejected by the handler' })),
  }),
];

// A step after authentication that fails on demand, as the edge's rate limit or idempotency step can.
const failOnDemand: RequestHandler = (req, _res, next) => {
  if (req.headers['x-fail'] === 'next') return next(new AppError('internal', { detail: 'passed to next' }));
  if (req.headers['x-fail'] === 'throw') throw new AppError('internal', { detail: 'thrown' });
  next();
};

const authenticate = async (req: express.Request) => {
  if (req.headers.authorization === 'Bearer good') return principal;
  throw new AppError('auth.token_missing');
};

let base = '';
let server: ReturnType<express.Express['listen']>;
beforeAll(async () => {
  const app = express();
  app.use(buildRouter(table, authenticate, { prefix: '/v1', before: [failOnDemand] }));
  app.use((req, res) => void res.status(404).json({ unmatched: `${req.method} ${req.path}` }));
  const problem: ErrorRequestHandler = (error: unknown, _req, res, _next) => {
    res.status(500).json({ error: error instanceof URIError ? 'URIError' : error instanceof AppError ? error.code : String(error), detail: (error as Error).message });
  };
  app.use(problem);
  server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((done) => server.close(done)));

/** The answer to `method` on `path` under /v1 (`fullPath` when given: the whole path as sent). */
async function answer(method: string, path: string, headers: Record<string, string> = {}, fullPath = `/v1${path}`): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${base}${fullPath}`, { method, headers });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}
const sent = (method: string, fullPath: string, headers: Record<string, string> = {}) => answer(method, '', headers, fullPath);

describe('buildRouter', () => {
  it('finds each route by method and path, with its parameters', async () => {
    expect((await answer('GET', '/rundowns')).body).toMatchObject({ data: { name: 'list' } });
    expect((await answer('POST', '/rundowns')).body).toMatchObject({ data: { name: 'create' } });
    expect((await answer('GET', '/rundowns/r1')).body).toMatchObject({ data: { name: 'one', params: { id: 'r1' } } });
    expect((await answer('POST', '/rundowns/r1/action:next')).body).toMatchObject({ data: { name: 'next', params: { id: 'r1' } } });
    expect((await answer('DELETE', '/rundowns/r1/cues/c1')).body).toMatchObject({ data: { name: 'delete cue', params: { id: 'r1', cue_id: 'c1' } } });
  });

  it('keeps table order among routes that match the same request', async () => {
    expect((await answer('GET', '/rundowns/r1/status')).body).toMatchObject({ data: { name: 'status' } });
    expect((await answer('GET', '/rundowns/r1/cues')).body).toMatchObject({ data: { name: 'first of two that match', params: { what: 'cues' } } });
  });

  it('accepts one trailing slash, answers HEAD by the GET route, and is case sensitive', async () => {
    expect((await answer('GET', '/rundowns/r1/status/')).body).toMatchObject({ data: { name: 'status' } });
    expect((await answer('GET', '/rundowns/')).body).toMatchObject({ data: { name: 'list' } });
    expect((await answer('POST', '/rundowns/r1/action:next/')).body).toMatchObject({ data: { name: 'next' } });
    const head = await answer('HEAD', '/rundowns/r1/status');
    expect(head).toEqual({ status: 200, body: undefined });
    expect((await answer('GET', '/Rundowns')).body).toEqual({ unmatched: 'GET /v1/Rundowns' });
    expect((await answer('GET', '/rundowns/r1/Status')).body).toMatchObject({ data: { name: 'first of two that match', params: { what: 'Status' } } });
  });

  it('passes on what no route answers: another method, another segment count, an empty segment', async () => {
    const unanswered: [string, string][] = [
      ['PATCH', '/rundowns/r1'],
      ['PUT', '/rundowns/r1'],
      ['GET', '/rundowns/r1/cues/c1/x'],
      ['GET', '/rundowns/r1/status//'],
      ['DELETE', '/rundowns//cues/c1'],
      ['DELETE', '/rundowns/r1/cues//'],
      ['GET', '/rundowns//'],
      ['GET', '//rundowns'],
    ];
    for (const [method, path] of unanswered) expect((await answer(method, path)).body).toEqual({ unmatched: `${method} /v1${path}` });
  });

  it('serves the table under its prefix in any case (as app.use matched it), nothing at the prefix itself or beside it', async () => {
    expect((await sent('GET', '/V1/rundowns/r1')).body).toMatchObject({ data: { name: 'one', params: { id: 'r1' } } });
    expect((await sent('GET', '/v1')).body).toEqual({ unmatched: 'GET /v1' });
    expect((await sent('GET', '/v1/')).body).toEqual({ unmatched: 'GET /v1/' });
    expect((await sent('GET', '/v1x/rundowns')).body).toEqual({ unmatched: 'GET /v1x/rundowns' });
    expect((await sent('GET', '/%761/rundowns')).body).toEqual({ unmatched: 'GET /%761/rundowns' });
    expect((await sent('GET', '/rundowns')).body).toEqual({ unmatched: 'GET /rundowns' });
  });

  it('answers a parameter that could never be an id (too long, a control character) as not found, before any step of the route', async () => {
    for (const path of [`/rundowns/${'x'.repeat(65)}/cues/c1`, '/rundowns/r1%00/cues/c1', '/rundowns/r1/cues/c%0A1', `/rundowns/r1/cues/${'%F0%9F%98%80'.repeat(40)}`]) {
      expect((await answer('DELETE', path)).body, path).toMatchObject({ error: 'not_found' });
    }
    expect((await answer('GET', `/rundowns/${'x'.repeat(65)}`)).body).toMatchObject({ error: 'not_found' });
  });

  it('decodes each parameter as Express does, and matches the rest of the path as it was sent', async () => {
    const id = async (path: string) => ((await answer('GET', path)).body as { data: { params: Record<string, string> } }).data.params;
    expect(await id('/rundowns/a%20b/status')).toEqual({ id: 'a b' });
    expect(await id('/rundowns/a%2Fb')).toEqual({ id: 'a/b' });
    expect(await id('/rundowns/a%25b')).toEqual({ id: 'a%b' });
    expect(await id('/rundowns/a%2520b')).toEqual({ id: 'a%20b' });
    expect(await id('/rundowns/%C3%A9/status/')).toEqual({ id: 'é' });
    expect(await id('/rundowns/a+b:c;d@e')).toEqual({ id: 'a+b:c;d@e' });
    expect(await id(`/rundowns/${'x'.repeat(64)}`)).toEqual({ id: 'x'.repeat(64) });
    // A percent-encoded letter or colon is not the route's literal: `st%61tus` is a parameter, `action%3Anext` nothing.
    expect((await answer('GET', '/rundowns/r1/st%61tus')).body).toMatchObject({ data: { name: 'first of two that match', params: { what: 'status' } } });
    expect((await answer('POST', '/rundowns/r1/action%3Anext')).body).toEqual({ unmatched: 'POST /v1/rundowns/r1/action%3Anext' });
    expect((await answer('GET', '/rundown%73')).body).toEqual({ unmatched: 'GET /v1/rundown%73' });
    // A parameter that is not valid percent-encoding is the error handler's (the problem handler answers 404).
    expect(await answer('GET', '/rundowns/%E2%9C')).toMatchObject({ status: 500, body: { error: 'URIError' } });
    expect(await answer('GET', '/rundowns/r1/cues/%zz/x')).toEqual({ status: 404, body: { unmatched: 'GET /v1/rundowns/r1/cues/%zz/x' } });
  });

  it('hands every failure to the error handler: the authentication’s, a step’s (passed to next or thrown), the handler’s rejection', async () => {
    expect(await answer('POST', '/rundowns/r1/cues')).toMatchObject({ status: 500, body: { error: 'auth.token_missing' } });
    expect(await answer('POST', '/rundowns/r1/cues', { authorization: 'Bearer good', 'x-fail': 'next' })).toEqual({ status: 500, body: { error: 'internal', detail: 'passed to next' } });
    expect(await answer('POST', '/rundowns/r1/cues', { authorization: 'Bearer good', 'x-fail': 'throw' })).toEqual({ status: 500, body: { error: 'internal', detail: 'thrown' } });
    expect(await answer('GET', '/boom')).toEqual({ status: 500, body: { error: 'internal', detail: 'rejected by the handler' } });
  });

  it('derives the ids an Idempotency-Key fixes from the path as sent, prefix included (stored ids must not change)', async () => {
    const ids = async (path: string) => (await sent('POST', path, { authorization: 'Bearer good', 'idempotency-key': 'key-1' })).body;
    // Pinned values: what the Express-mounted router derived (`req.baseUrl + req.path`).
    expect(await ids('/v1/rundowns/r1/cues')).toMatchObject({ data: { id: 'cue_UIQXwGB2HveSGmM3', second: 'cue_YEGfxV0B4emPMb7c' } });
    expect(await ids('/v1/rundowns/r1/cues/')).toMatchObject({ data: { id: 'cue_3xM4g46MLUg6VXzm' } });
    expect(await ids('/V1/rundowns/r%31/cues')).toMatchObject({ data: { id: 'cue_pZrBMeMtC_fUs2SL' } });
  });
});

describe('buildRouter over the real route tables', () => {
  const urls = { base: 'http://api.test/v1', docs: '', spec: '', errors: '', v0Spec: '', asyncApi: '', events: '' };
  const tables = { '/v1': v1Routes({} as never, urls, {} as never, {} as never), '/admin': adminRoutes({} as never, {} as never) };

  it('reaches every route of the real tables: no route is shadowed by one before it', async () => {
    const app = express();
    for (const [prefix, routes] of Object.entries(tables)) {
      // The table's paths and methods, each answering with its place in the table.
      const bare = routes.map((r, i) => defineRoute({ method: r.method, path: r.path, summary: r.summary, tag: r.tag, auth: 'none', handler: async () => ({ data: i }) }));
      app.use(buildRouter(bare, authenticate, { prefix }));
    }
    app.use((_req, res) => void res.status(404).json({ data: null }));
    const listening = app.listen(0, '127.0.0.1');
    await once(listening, 'listening');
    const at = `http://127.0.0.1:${(listening.address() as AddressInfo).port}`;
    try {
      for (const [prefix, routes] of Object.entries(tables)) {
        for (const [index, r] of routes.entries()) {
          // Each parameter a plain value (`{delivery_id}:redeliver` keeps its literal suffix).
          const path = r.path.replace(/\{\w+\}/g, 'x');
          const res = await fetch(`${at}${prefix}${path}`, { method: r.method.toUpperCase() });
          expect(((await res.json()) as { data: number | null }).data, `${r.method.toUpperCase()} ${prefix}${r.path}`).toBe(index);
        }
      }
    } finally {
      await new Promise((done) => listening.close(done));
    }
  });
});
