import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineRoute, type Method, type RouteDef } from '../route.js';
import { buildRouter } from './router.js';

// The router matches a request only against the routes of its method and segment count: whatever it
// answers must be what one Express router over the whole table, in table order, would answer.
const route = (method: Method, path: string, name: string): RouteDef =>
  defineRoute({ method, path, summary: name, tag: 't', auth: 'none', handler: async ({ params }) => ({ data: { name, params } }) });

const table = [
  route('get', '/rundowns', 'list'),
  route('post', '/rundowns', 'create'),
  route('get', '/rundowns/{id}', 'one'),
  route('get', '/rundowns/{id}/status', 'status'),
  route('get', '/rundowns/{id}/{what}', 'first of two that match'),
  route('post', '/rundowns/{id}/action:next', 'next'),
  route('delete', '/rundowns/{id}/cues/{cue_id}', 'delete cue'),
];

let base = '';
let server: ReturnType<express.Express['listen']>;
beforeAll(async () => {
  const app = express();
  app.use('/v1', buildRouter(table, async () => Promise.reject(new Error('no route here authenticates'))));
  app.use((req, res) => void res.status(404).json({ unmatched: `${req.method} ${req.path}` }));
  server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise((done) => server.close(done)));

async function answer(method: string, path: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${base}${path}`, { method });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

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
    const head = await answer('HEAD', '/rundowns/r1/status');
    expect(head).toEqual({ status: 200, body: undefined });
    expect((await answer('GET', '/Rundowns')).body).toEqual({ unmatched: 'GET /v1/Rundowns' });
  });

  it('passes on what no route answers: another method, another segment count, an empty segment', async () => {
    expect((await answer('PATCH', '/rundowns/r1')).body).toEqual({ unmatched: 'PATCH /v1/rundowns/r1' });
    expect((await answer('GET', '/rundowns/r1/cues/c1/x')).body).toEqual({ unmatched: 'GET /v1/rundowns/r1/cues/c1/x' });
    expect((await answer('GET', '/rundowns/r1/status//')).body).toEqual({ unmatched: 'GET /v1/rundowns/r1/status//' });
    expect((await answer('DELETE', '/rundowns//cues/c1')).body).toEqual({ unmatched: 'DELETE /v1/rundowns//cues/c1' });
  });
});
