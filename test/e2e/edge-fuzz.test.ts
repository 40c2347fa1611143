import { connect } from 'node:net';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { errorCatalogue } from '@rundown/shared';
import { createTeam, REQUEST_ID, system, v1, type TestTeam } from '../support/client.js';

/**
 * Bad input, generated: every route of the served OpenAPI document (itself generated from the route
 * table's zod schemas), with valid and invalid path parameters, queries, headers and bodies derived
 * from the operation's own schemas. Whatever arrives, the answer is never a 5xx, and every error is
 * a problem+json with a catalogue code, the request id and the RateLimit headers. Seeded, so a
 * failure reproduces (fast-check prints the seed and the shrunk counterexample).
 */

const SEED = Number(process.env.FUZZ_SEED ?? 20_261_122);
const RUNS = Number(process.env.FUZZ_RUNS ?? 400);

type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  maxItems?: number;
  $ref?: string;
};
interface Operation {
  parameters?: { name: string; in: 'path' | 'query' | 'header'; schema?: Schema }[];
  requestBody?: { content: Record<string, { schema: Schema }> };
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
}

let doc: Document;
let team: TestTeam;
let owner: string;
let viewer: string;
let rundownId: string;

beforeAll(async () => {
  doc = (await v1('GET', '/openapi.json')).body as Document;
  team = await createTeam();
  owner = await team.token('OWNER');
  viewer = await team.token('VIEW');
  rundownId = (await v1('POST', '/rundowns', { token: owner, body: { title: 'Fuzzed', columns: [{ name: 'Script' }] } })).body.data.id;
});

const resolve = (schema: Schema): Schema => {
  if (!schema.$ref) return schema;
  const name = schema.$ref.split('/').at(-1)!;
  return doc.components?.schemas?.[name] ?? {};
};

/** Values the schema accepts (as far as JSON Schema says; the domain may still refuse them). */
function valid(schema: Schema, depth = 0): fc.Arbitrary<unknown> {
  const s = resolve(schema);
  if (s.const !== undefined) return fc.constant(s.const);
  if (s.enum) return fc.constantFrom(...s.enum);
  const alternatives = s.anyOf ?? s.oneOf;
  if (alternatives?.length) return fc.oneof(...alternatives.map((a) => valid(a, depth)));
  if (s.allOf?.length) return valid(s.allOf[0]!, depth);
  const type = Array.isArray(s.type) ? s.type : s.type ? [s.type] : ['string', 'integer', 'object'];
  return fc.oneof(
    ...type.map((t): fc.Arbitrary<unknown> => {
      switch (t) {
        case 'null':
          return fc.constant(null);
        case 'boolean':
          return fc.boolean();
        case 'integer':
          return fc.integer({ min: Math.max(s.minimum ?? -1_000, -(2 ** 31)), max: Math.min(s.maximum ?? 1_000_000, 2 ** 31) });
        case 'number':
          return fc.double({ min: s.minimum ?? -1e6, max: s.maximum ?? 1e6, noNaN: true });
        case 'string':
          return fc.string({ minLength: s.minLength ?? 0, maxLength: Math.min(s.maxLength ?? 40, 40) });
        case 'array':
          return depth > 4 ? fc.constant([]) : fc.array(valid(s.items ?? {}, depth + 1), { maxLength: Math.min(s.maxItems ?? 3, 3) });
        default: {
          if (depth > 4) return fc.constant({});
          const props = s.properties ?? {};
          const required = new Set(s.required ?? []);
          return fc.record(Object.fromEntries(Object.entries(props).map(([k, v]) => [k, valid(v, depth + 1)])), {
            requiredKeys: [...required].filter((k) => k in props),
          });
        }
      }
    }),
  );
}

/** What fuzzers send: wrong types, NUL, huge, deep, unicode edge cases, prototype keys. */
const hostile: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom('\u0000', 'a\u0000b', '\uD800', '\uFFFF', '𝄞'.repeat(50), ''.padEnd(5_000, 'x'), -0, 1e308, -1, 2 ** 53, null, true, [], {}),
  fc.constant({ __proto__: { polluted: true }, constructor: { prototype: { x: 1 } } }),
  fc.integer({ min: 50, max: 3_000 }).map((depth) => JSON.parse('['.repeat(depth) + ']'.repeat(depth)) as unknown),
  fc.integer({ min: 50, max: 500 }).map((depth) => {
    let value: unknown = 'x';
    for (let i = 0; i < depth; i++) value = { a: value };
    return value;
  }),
);

/** A valid body with one field replaced by something hostile (or the whole body hostile). */
function bodyOf(schema: Schema | undefined): fc.Arbitrary<{ raw?: string; json?: unknown }> {
  const good = schema ? valid(schema) : fc.constant(undefined);
  return fc.oneof(
    { weight: 3, arbitrary: good.map((json) => ({ json })) },
    {
      weight: 3,
      arbitrary: fc.tuple(good, fc.string({ maxLength: 12 }), hostile).map(([json, key, bad]) => {
        const keys = json && typeof json === 'object' && !Array.isArray(json) ? Object.keys(json) : [];
        const at = keys.length ? keys[key.length % keys.length]! : key;
        return { json: json && typeof json === 'object' && !Array.isArray(json) ? { ...json, [at]: bad } : bad };
      }),
    },
    { weight: 1, arbitrary: hostile.map((json) => ({ json })) },
    {
      weight: 1,
      arbitrary: fc.constantFrom('{"title": ', '[1,2', '{"a":1}{', 'null', '"x"', '\u0000', '{"title":"\\ud800"}', '['.repeat(2_400) + ']'.repeat(2_400)).map((raw) => ({ raw })),
    },
  );
}

const pathParam = (name: string) =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constant(name === 'id' ? '{rundown}' : 'x') },
    { weight: 1, arbitrary: fc.uuid().map((u) => encodeURIComponent(u)) },
    { weight: 2, arbitrary: fc.constantFrom('%00', 'a%00b', '%zz', '%E2%9C', '..', '%2F', 'x'.repeat(300), '%F0%9F%8E%AC', ' ', '%20', 'null', '0') },
    { weight: 1, arbitrary: fc.string({ maxLength: 20 }).map((s) => encodeURIComponent(s) || 'x') },
  );

const tokenHeader = () =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constant('owner') },
    { weight: 1, arbitrary: fc.constant('viewer') },
    { weight: 1, arbitrary: fc.constantFrom('none', 'Bearer', 'Bearer x.y.z', 'Basic abc', `Bearer ${'a'.repeat(3_000)}`) },
  );

interface Generated {
  method: string;
  path: string;
  query: Record<string, string>;
  token: string;
  body: { raw?: string; json?: unknown };
  contentType: string;
  idempotencyKey: string | undefined;
}

function requestFor(path: string, method: string, op: Operation): fc.Arbitrary<Generated> {
  const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
  const queryParams = (op.parameters ?? []).filter((p) => p.in === 'query');
  const bodySchema = op.requestBody ? Object.values(op.requestBody.content)[0]?.schema : undefined;
  return fc.record({
    method: fc.constant(method.toUpperCase()),
    path: fc.tuple(...names.map(pathParam)).map((values) => names.reduce((p, n, i) => p.replace(`{${n}}`, values[i]!), path)),
    query: fc
      .tuple(...queryParams.map((p) => fc.option(fc.oneof(valid(p.schema ?? {}).map((v) => String(v)), fc.constantFrom('', '\u0000', '-1', 'x'.repeat(500), '[]')), { nil: undefined })))
      .map((values) => Object.fromEntries(queryParams.flatMap((p, i) => (values[i] === undefined ? [] : [[p.name, values[i]!]])))),
    token: tokenHeader(),
    body: method === 'get' ? fc.constant({}) : bodyOf(bodySchema),
    contentType: fc.oneof({ weight: 8, arbitrary: fc.constant('application/json') }, { weight: 1, arbitrary: fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'application/merge-patch+json') }),
    idempotencyKey: method === 'get' ? fc.constant(undefined) : fc.option(fc.oneof(fc.uuid(), fc.constantFrom('', 'x'.repeat(300))), { nil: undefined }),
  });
}

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

describe('generated requests across every route', () => {
  it(`never answers 5xx, and every error is problem+json with a catalogue code (${RUNS} requests, seed ${SEED})`, async () => {
    const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods)
        .filter(([method]) => ['get', 'post', 'patch', 'delete'].includes(method))
        .map(([method, op]) => ({ path: path.replace(/^\/v1/, ''), method, op })),
    );
    expect(operations.length).toBeGreaterThan(20);
    const request = fc.oneof(...operations.map(({ path, method, op }) => requestFor(path, method, op)));
    const answers = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const headers: Record<string, string> = { 'content-type': r.contentType };
        if (r.idempotencyKey !== undefined) headers['idempotency-key'] = r.idempotencyKey;
        const token = r.token === 'owner' ? owner : r.token === 'viewer' ? viewer : undefined;
        if (!token && r.token !== 'none') headers.authorization = r.token;
        const path = r.path.replaceAll('{rundown}', rundownId);
        const raw = r.body.raw ?? (r.body.json === undefined ? undefined : JSON.stringify(r.body.json));
        const res = await v1(r.method, path, { ...(token ? { token } : {}), query: r.query, headers, ...(raw !== undefined ? { rawBody: raw } : {}) });
        expectEdgeAnswer(res, `${r.method} ${path} ${JSON.stringify(r.query)} ${(raw ?? '').slice(0, 200)}`);
        const answer = res.status < 400 ? String(res.status) : `${res.status} ${String(res.body.code)}`;
        answers.set(answer, (answers.get(answer) ?? 0) + 1);
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    // The generator reaches the handlers (successes) and a wide range of refusals, not one wall.
    const successes = [...answers].filter(([a]) => a.startsWith('2')).reduce((n, [, c]) => n + c, 0);
    expect(successes, JSON.stringify([...answers])).toBeGreaterThan(RUNS / 20);
    expect(answers.size, JSON.stringify([...answers])).toBeGreaterThan(12);
    // Nothing the fuzzer sent broke the rundown it aimed at (or it deleted it, cleanly).
    const after = await v1('GET', `/rundowns/${rundownId}`, { token: owner });
    expect([200, 404]).toContain(after.status);
  }, 240_000);

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
  const cases: [string, () => string, number, string][] = [
    ['a request line over the header limit', () => `GET /v1/rundowns/${'x'.repeat(20_000)} HTTP/1.1\r\nHost: ${host()}\r\n\r\n`, 431, 'request.headers_too_large'],
    ['headers over the limit', () => `GET /v1/auth HTTP/1.1\r\nHost: ${host()}\r\nX-Big: ${'y'.repeat(20_000)}\r\n\r\n`, 431, 'request.headers_too_large'],
    ['an unknown method', () => `FROB /v1/auth HTTP/1.1\r\nHost: ${host()}\r\n\r\n`, 400, 'request.malformed'],
    ['malformed HTTP', () => `GET /v1/auth HTTP/1.1\r\nHost: ${host()}\r\nBad Header Line\r\n\r\n`, 400, 'request.malformed'],
    ['not HTTP at all', () => `\u0000\u0001\u0002 hello\r\n\r\n`, 400, 'request.malformed'],
    ['an unknown Expect', () => `GET /v1/auth HTTP/1.1\r\nHost: ${host()}\r\nExpect: teapot\r\n\r\n`, 417, 'request.expectation_failed'],
    ['an HTTP/1.1 request without Host', () => `GET /v1/auth HTTP/1.1\r\nConnection: close\r\n\r\n`, 400, 'request.malformed'],
    ['CONNECT (a proxy’s method)', () => `CONNECT 127.0.0.1:1 HTTP/1.1\r\nHost: ${host()}\r\n\r\n`, 400, 'request.malformed'],
  ];
  for (const [what, payload, status, code] of cases) {
    it(`answers ${what} with ${status} ${code} as problem+json, with a request id and RateLimit headers`, async () => {
      const res = await raw(payload());
      expectEdgeAnswer(res, what);
      expect(res.status, res.text).toBe(status);
      expect(res.body.code).toBe(code);
      expect(res.body.type).toBe(`${system().publicUrl}/docs/api-v1/errors#${code}`);
    });
  }

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
