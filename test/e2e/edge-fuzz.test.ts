import { connect } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { errorCatalogue } from '@rundown/shared';
import { createTeam, REQUEST_ID, system, v1, type TestTeam } from '../support/client.js';

/**
 * Bad input the schema-driven fuzz (openapi-fuzz.test.ts) does not draw: a body nested past the
 * parser's limit on every JSON route, U+0000 in a path id, and bytes Node's HTTP layer answers
 * before any route. Every answer is a problem+json with a catalogue code, the request id and the
 * RateLimit headers.
 */

interface Operation {
  requestBody?: unknown;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
}

let doc: Document;
let owner: string;
let rundownId: string;

beforeAll(async () => {
  doc = (await v1('GET', '/openapi.json')).body as Document;
  const team: TestTeam = await createTeam();
  owner = await team.token('OWNER');
  rundownId = (await v1('POST', '/rundowns', { token: owner, body: { title: 'Fuzzed', columns: [{ name: 'Script' }] } })).body.data.id;
});

function expectEdgeAnswer(res: { status: number; headers: Headers; body: any; text: string }, what: string): void {
  expect(res.status, `${what} → ${res.status} ${res.text.slice(0, 300)}`).toBeLessThan(500);
  expect(res.headers.get('x-request-id'), what).toMatch(REQUEST_ID);
  for (const name of ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']) expect(res.headers.get(name), `${name}: ${what}`).toMatch(/^\d+$/);
  if (res.status < 400) return;
  expect(res.headers.get('content-type'), what).toMatch(/^application\/problem\+json/);
  expect(Object.hasOwn(errorCatalogue, res.body.code), `${what}: code ${String(res.body.code)}`).toBe(true);
  expect(res.body.status, what).toBe(res.status);
  expect(res.body.request_id, what).toBe(res.headers.get('x-request-id'));
}

describe('bodies and ids past the limits', () => {
  it('answers a deeply nested body (a bare array 2,400 levels deep) on every JSON route with 400, not 500', async () => {
    const deep = '['.repeat(2_400) + ']'.repeat(2_400);
    let jsonRoutes = 0;
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        if (!op.requestBody) continue;
        jsonRoutes++;
        const res = await v1(method.toUpperCase(), path.replace(/^\/v1/, '').replaceAll(/\{\w+\}/g, (m) => (m === '{id}' ? rundownId : 'x')), {
          token: owner,
          rawBody: deep,
          headers: { 'content-type': 'application/json' },
        });
        expectEdgeAnswer(res, `${method} ${path}`);
        expect(res.status, `${method} ${path}`).toBe(400);
        expect(res.body.code).toBe('bad_request');
        expect(res.body.details.issues[0].code).toBe('too_deep');
      }
    }
    // The loop proves nothing if the document lost its request bodies.
    expect(jsonRoutes).toBeGreaterThan(10);
  });

  it('answers DELETE of an id with U+0000 as GET and PATCH do: 404', async () => {
    for (const method of ['GET', 'PATCH', 'DELETE']) {
      const res = await v1(method, '/rundowns/a%00b', { token: owner, ...(method === 'PATCH' ? { body: { title: 'x' } } : {}) });
      expectEdgeAnswer(res, `${method} /rundowns/a%00b`);
      expect(res.status, method).toBe(404);
      expect(res.body.code).toBe('rundowns.not_found');
    }
  });
});

/** One raw exchange on a fresh connection: what a client that does not speak HTTP well sends. */
function raw(payload: string): Promise<{ status: number; headers: Headers; body: any; text: string; data: string }> {
  const url = new URL(system().publicUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    let data = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (data += chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', ...rest] = data.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = new Headers();
      for (const line of lines) {
        const i = line.indexOf(':');
        if (i > 0) headers.append(line.slice(0, i).trim(), line.slice(i + 1).trim());
      }
      const text = rest.join('\r\n\r\n');
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body, text, data });
    });
    socket.write(payload);
    setTimeout(() => socket.end(), 1_000).unref();
  });
}

describe('answers Node’s HTTP layer would give bare', () => {
  const host = () => new URL(system().publicUrl).host;
  // The last column: the problem's `instance`, the request path wherever the request line could be read.
  const cases: [string, () => string, number, string, string][] = [
    ['a request line over the header limit', () => `GET /v1/rundowns/${'x'.repeat(20_000)} HTTP/1.1\r\nHost: ${host()}\r\n\r\n`, 431, 'request.headers_too_large', `/v1/rundowns/${'x'.repeat(20_000)}`],
    ['headers over the limit', () => `GET /v1/auth?x=1 HTTP/1.1\r\nHost: ${host()}\r\nX-Big: ${'y'.repeat(20_000)}\r\n\r\n`, 431, 'request.headers_too_large', '/v1/auth'],
    ['an unknown method', () => `FROB /v1/auth HTTP/1.1\r\nHost: ${host()}\r\n\r\n`, 400, 'request.malformed', '/v1/auth'],
    ['an unknown method FOO', () => `FOO /v1/rundowns HTTP/1.1\r\nHost: ${host()}\r\n\r\n`, 400, 'request.malformed', '/v1/rundowns'],
    ['malformed HTTP', () => `GET /v1/auth HTTP/1.1\r\nHost: ${host()}\r\nBad Header Line\r\n\r\n`, 400, 'request.malformed', '/v1/auth'],
    ['not HTTP at all', () => `\u0000\u0001\u0002 hello\r\n\r\n`, 400, 'request.malformed', ''],
    ['an unknown Expect', () => `GET /v1/auth HTTP/1.1\r\nHost: ${host()}\r\nExpect: teapot\r\n\r\n`, 417, 'request.expectation_failed', '/v1/auth'],
    ['an HTTP/1.1 request without Host', () => `GET /v1/auth HTTP/1.1\r\nConnection: close\r\n\r\n`, 400, 'request.malformed', '/v1/auth'],
    ['CONNECT (a proxy’s method)', () => `CONNECT 127.0.0.1:1 HTTP/1.1\r\nHost: ${host()}\r\n\r\n`, 400, 'request.malformed', ''],
  ];
  for (const [what, payload, status, code, instance] of cases) {
    it(`answers ${what} with ${status} ${code} as problem+json, with a request id and RateLimit headers`, async () => {
      const res = await raw(payload());
      expectEdgeAnswer(res, what);
      expect(res.status, res.text).toBe(status);
      expect(res.body.code).toBe(code);
      expect(res.body.type).toBe(`${system().publicUrl}/docs/api-v1/errors#${code}`);
      // Every field of the specification's problem document, `instance` included.
      for (const field of ['type', 'title', 'status', 'code', 'detail', 'instance', 'request_id', 'server_time', 'spec_url', 'documentation_url']) {
        expect(res.body, `${what}: ${field}`).toHaveProperty(field);
      }
      expect(res.body.instance).toBe(instance);
    });
  }

  it('refuses more than one Authorization header (even two copies of one valid token) with 401 auth.malformed_authorization', async () => {
    const twice = (path: string, first: string, second = first) =>
      raw(`GET ${path} HTTP/1.1\r\nHost: ${host()}\r\nAuthorization: Bearer ${first}\r\nauthorization: Bearer ${second}\r\nConnection: close\r\n\r\n`);
    for (const [path, first, second] of [
      ['/v1/auth', owner, owner],
      ['/v1/auth', owner, 'not-a-token'],
      [`/v1/rundowns/${rundownId}`, 'not-a-token', owner],
      [`/v1/rundowns/${rundownId}/events`, owner, owner],
    ] as const) {
      const res = await twice(path, first, second);
      expectEdgeAnswer(res, path);
      expect(res.status, res.text).toBe(401);
      expect(res.body.code).toBe('auth.malformed_authorization');
      expect(res.body.instance).toBe(path);
    }
    // One header with the same token is as good as ever.
    const once = await raw(`GET /v1/auth HTTP/1.1\r\nHost: ${host()}\r\nAuthorization: Bearer ${owner}\r\nConnection: close\r\n\r\n`);
    expect(once.status, once.text).toBe(200);
  });

  it('answers bad bytes after a finished answer on a kept-alive connection, and never writes into a stream under way', async () => {
    const url = new URL(system().publicUrl);
    // After a whole answer: the next request's bad bytes get their problem document on the same connection.
    const after = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(url.port), url.hostname);
      let data = '';
      let sentBad = false;
      socket.setEncoding('latin1');
      socket.on('error', reject);
      socket.on('data', (chunk: string) => {
        data += chunk;
        const [head = '', body = ''] = data.split('\r\n\r\n');
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? NaN);
        if (!sentBad && Buffer.byteLength(body, 'latin1') >= length) {
          sentBad = true;
          socket.write(`FROB /v1/auth HTTP/1.1\r\nHost: ${host()}\r\n\r\n`);
        }
      });
      socket.on('close', () => resolve(data));
      socket.write(`GET /v1/auth HTTP/1.1\r\nHost: ${host()}\r\nAuthorization: Bearer ${owner}\r\n\r\n`);
      setTimeout(() => socket.end(), 5_000).unref();
    });
    expect(after, after).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(after).toMatch(/\}HTTP\/1\.1 400 Bad Request\r\n[^]*"code":"request\.malformed"/);
    // During an SSE stream: the connection is closed, and no answer lands inside the stream.
    const streamed = await new Promise<{ data: string; closed: boolean }>((resolve, reject) => {
      const socket = connect(Number(url.port), url.hostname);
      let data = '';
      let sentBad = false;
      socket.setEncoding('latin1');
      socket.on('error', reject);
      socket.on('data', (chunk: string) => {
        data += chunk;
        if (!sentBad && /event: ?ready/.test(data)) {
          sentBad = true;
          socket.write(`FROB /v1/auth HTTP/1.1\r\nHost: ${host()}\r\n\r\n`);
        }
      });
      socket.on('close', () => resolve({ data, closed: true }));
      socket.write(`GET /v1/rundowns/${rundownId}/events HTTP/1.1\r\nHost: ${host()}\r\nAuthorization: Bearer ${owner}\r\nAccept: text/event-stream\r\n\r\n`);
      setTimeout(() => resolve({ data, closed: false }), 5_000).unref();
    });
    expect(streamed.data).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(streamed.data).toMatch(/event: ?ready/);
    expect(streamed.closed, 'the stream is closed').toBe(true);
    expect(streamed.data.match(/HTTP\/1\.1 /g)).toHaveLength(1);
  });

  it('still answers 100-continue with a normal exchange', async () => {
    const body = JSON.stringify({ title: 'continued' });
    const res = await raw(
      `POST /v1/rundowns HTTP/1.1\r\nHost: ${host()}\r\nAuthorization: Bearer ${owner}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n${body}`,
    );
    // The interim 100 comes first; the final answer follows it on the same connection.
    expect(res.status, res.data).toBe(100);
    expect(res.data).toMatch(/\r\n\r\nHTTP\/1\.1 201 Created\r\n/);
  });
});
