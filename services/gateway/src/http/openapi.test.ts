import { compileErrors, validate } from '@readme/openapi-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { createLogger, errorCatalogue, errorCodes } from '@rundown/shared/core';
import { errorReferenceHtml } from './docs.js';
import { openApiDocument, routeErrorCodes } from './openapi.js';
import { createPublicApp } from './server.js';
import { canonicalTimeZone, TIME_ZONE_FORMAT } from '../wire/schemas/common.js';
import { testRoutes, testUrls } from './routes.fixture.js';

const urls = testUrls;
const routes = testRoutes;
const document = openApiDocument(routes, urls) as { openapi: string; paths: Record<string, Record<string, { 'x-error-codes': string[]; responses: Record<string, unknown> }>> };

type Layer = {
  rawPath?: string;
  route?: { path: string | string[]; methods: Record<string, boolean> };
  handle: { stack?: Layer[]; served?: readonly { method: string; path: string }[] };
};

/**
 * Every (method, path) the public app answers under /v1, read from what serves it: Express's own
 * routing table, and the (method, path) pairs the v1 dispatcher compiled into its router.
 */
function servedV1Routes(): string[] {
  const app = createPublicApp({
    routes,
    authenticator: {} as never,
    urls,
    logger: createLogger('test'),
    rateLimiter: {} as never,
    anonymousRateLimit: 1,
    idempotencyStore: {} as never,
    ready: () => true,
  });
  const out: string[] = [];
  const walk = (stack: Layer[], prefix: string) => {
    for (const layer of stack) {
      if (layer.route) {
        for (const path of [layer.route.path].flat()) {
          for (const method of Object.keys(layer.route.methods)) out.push(`${method.toUpperCase()} ${prefix}${path}`);
        }
      } else if (layer.handle.served) {
        for (const { method, path } of layer.handle.served) out.push(`${method} ${prefix}${path}`);
      } else if (layer.handle.stack) walk(layer.handle.stack, `${prefix}${layer.rawPath ?? ''}`);
    }
  };
  walk((app as unknown as { router: { stack: Layer[] } }).router.stack, '');
  // Express's `:id` and `\:` to OpenAPI's `{id}` and `:`.
  return out
    .filter((r) => r.split(' ')[1]!.startsWith('/v1/'))
    .map((r) => r.replace(' /v1/', ' /').replace(/\/:(\w+)/g, '/{$1}').replace(/\\:/g, ':'));
}

describe('the OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document (@readme/openapi-parser)', { timeout: 60_000 }, async () => {
    expect(document.openapi).toBe('3.1.0');
    const result = await validate(structuredClone(document) as never);
    expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);
    expect(result.specification).toBe('OpenAPI');
  });

  it('describes every v1 route the gateway serves, and nothing it does not', () => {
    const served = servedV1Routes().sort();
    const documented = Object.entries(document.paths)
      .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`))
      .sort();
    expect(served.length).toBeGreaterThan(5);
    expect(documented).toEqual(served);
  });

  it('lists for each route every code it can answer with, grouped under the code’s status', () => {
    const create = document.paths['/rundowns']!.post!['x-error-codes'];
    for (const code of ['auth.token_missing', 'auth.query_token_not_allowed', 'auth.revocation_check_unavailable', 'forbidden', 'idempotency.invalid_key', 'idempotency.in_flight', 'idempotency.key_mismatch', 'idempotency.cache_corrupt', 'payload.too_large', 'unsupported_media_type', 'rundowns.invalid_payload', 'plan.limit_exceeded']) {
      expect(create, code).toContain(code);
    }
    // A read has no idempotency or body codes; GET /auth needs only VIEW, so it cannot be forbidden.
    const auth = document.paths['/auth']!.get!['x-error-codes'];
    expect(auth).not.toContain('idempotency.in_flight');
    expect(auth).not.toContain('forbidden');
    expect(document.paths['/openapi.json']!.get!['x-error-codes']).toEqual(['rate_limit.exceeded', 'request.headers_too_large', 'internal.unhandled']);
  });

  it('describes query parameters by what they accept, not as bare strings', () => {
    type Param = { name: string; in: string; schema: Record<string, unknown> };
    const query = (path: string, name: string) =>
      (document.paths[path]!.get as unknown as { parameters: Param[] }).parameters.find((p) => p.in === 'query' && p.name === name)!.schema;
    // Found by the schema-driven fuzz: `include` and `limit` were documented as any string.
    expect(query('/rundowns/{id}', 'include')).toMatchObject({ type: 'string', pattern: '^(cues|cells)(,(cues|cells))*$' });
    expect(query('/rundowns/{id}/cues', 'include')).toMatchObject({ pattern: '^(cells)(,(cells))*$' });
    for (const path of ['/rundowns', '/rundowns/{id}/cells']) expect(query(path, 'limit')).toMatchObject({ type: 'integer', minimum: 1, maximum: 100 });
    expect(query('/auth/probe', 'rundown_id')).toMatchObject({ type: 'string', minLength: 1 });
  });

  it('offers the query token only on the control surface', () => {
    const control = routeErrorCodes({ method: 'post', auth: 'control', role: 'SHOWCALL' });
    expect(control).not.toContain('auth.query_token_not_allowed');
    expect(control).toContain('auth.token_missing');
    expect(routeErrorCodes({ method: 'get', auth: 'bearer', role: 'VIEW' })).toContain('auth.query_token_not_allowed');
  });

  it('lists not_found on every route with a path parameter (an undecodable one answers it)', () => {
    // Found by the schema-driven fuzz: GET /rundowns/%C0%AF/cues/x answered a code the route did not list.
    for (const [path, ops] of Object.entries(document.paths)) {
      for (const op of Object.values(ops)) expect(op['x-error-codes'].includes('not_found'), path).toBe(path.includes('{'));
    }
  });
});

describe('the reference pages', () => {
  it('gives every catalogue code an anchor with its status, detail, details and recovery', () => {
    const html = errorReferenceHtml(urls);
    for (const code of errorCodes) {
      const at = html.indexOf(`<section id="${code}">`);
      expect(at, code).toBeGreaterThan(-1);
      const section = html.slice(at, html.indexOf('</section>', at));
      expect(section).toContain(`${errorCatalogue[code].status} ${errorCatalogue[code].title}`);
      expect(section).toContain('Recovery');
      for (const field of errorCatalogue[code].details ?? []) expect(section).toContain(`<code>${field}</code>`);
    }
    expect(html).not.toMatch(/<script|https?:\/\/(?!api\.test)/);
  });
});

describe('request bodies in the document: the rules the zod schemas check beyond shapes', () => {
  const ajv = new Ajv2020({ strict: false, allErrors: false }).addFormat(TIME_ZONE_FORMAT, (v: string) => canonicalTimeZone(v) !== undefined);
  const bodyOf = (method: string, path: string) => {
    const route = routes.find((r) => r.method === method && r.path === path)!;
    const op = (document.paths[path]![method] as unknown as { requestBody: { content: { 'application/json': { schema: object } } } }).requestBody;
    return { zod: route.body!, json: ajv.compile(op.content['application/json'].schema) };
  };
  const start = 1_795_370_400_000;
  // [method, path, body, accepted]: the document (ajv) and the route's own zod schema must both say `accepted`.
  const cases: [string, string, unknown, boolean][] = [
    ['patch', '/rundowns/{id}/cells', { cue_id: 'c', column_id: 'k', content: 'a' }, true],
    ['patch', '/rundowns/{id}/cells', { cue_id: 'c', column_id: 'k', content_html: '<b>a</b>' }, true],
    ['patch', '/rundowns/{id}/cells', { cue_id: 'c', column_id: 'k', content: 'a', content_html: 'b' }, false],
    ['patch', '/rundowns/{id}/cells', { cue_id: 'c', column_id: 'k' }, false],
    ['post', '/rundowns/{id}/cells:bulk', { items: [{ cue_id: 'c', column_id: 'k' }] }, false],
    ['post', '/rundowns/{id}/columns', { name: 'A', before_column_id: 'x' }, true],
    ['post', '/rundowns/{id}/columns', { name: 'A', before_column_id: 'x', after_column_id: 'y' }, false],
    ['post', '/rundowns/{id}/columns', { name: '   ' }, false],
    ['patch', '/rundowns/{id}/columns/{column_id}', { name: 'A', before_column_id: 'x', after_column_id: 'y' }, false],
    ['patch', '/rundowns/{id}/columns/{column_id}', { name: 'A', before_column_id: 'x' }, true],
    ['post', '/rundowns/{id}/cues', { scheduled: true, start_time: start }, true],
    ['post', '/rundowns/{id}/cues', { scheduled: true }, false],
    ['post', '/rundowns/{id}/cues', { scheduled: true, start_time: null }, false],
    ['post', '/rundowns/{id}/cues', { scheduled: false }, true],
    ['patch', '/rundowns/{id}/cues/{cue_id}', { scheduled: true }, true],
    ['patch', '/rundowns/{id}/cues/{cue_id}', { scheduled: true, start_time: null }, false],
    ['post', '/rundowns/{id}/cues:bulk', { items: [{ id: 'cue_1' }] }, false],
    ['post', '/rundowns/{id}/cues:bulk', { items: [{ id: 'cue_1', scheduled: true }] }, true],
    ['post', '/rundowns/{id}/cues:bulk', { items: [{ scheduled: true }] }, false],
    ['post', '/rundowns/{id}/cues:bulk', { items: [{}] }, true],
    ['post', '/rundowns/{id}/action:adjust-duration', { delta_ms: 0 }, false],
    ['post', '/rundowns/{id}/action:adjust-duration', { delta_ms: -1 }, true],
    ['post', '/rundowns', { title: 'T', timezone: 'Europe/Berlin' }, true],
    ['post', '/rundowns', { title: 'T', timezone: 'Mars/Olympus' }, false],
    ['post', '/rundowns', { title: ' ' }, false],
    ['post', '/rundowns', { title: 'T', cues: [{ scheduled: true }] }, false],
    ['post', '/rundowns', { title: 'T', cues: [{ type: 'group', children: [{ scheduled: true }] }] }, false],
    ['post', '/rundowns', { title: 'T', cues: [{ type: 'group', children: [{ title: 'a' }] }] }, true],
    ['patch', '/rundowns/{id}', { timezone: 'Nowhere/Else' }, false],
    ['post', '/rundowns/{id}/mentions', { name: '\t' }, false],
  ];

  it.each(cases)('%s %s %j: accepted %s, by the document and by the service’s schema alike', (method, path, body, accepted) => {
    const { zod, json } = bodyOf(method, path);
    expect(json(body), JSON.stringify(json.errors)).toBe(accepted);
    expect(zod.safeParse(body).success).toBe(accepted);
  });

  // A change with no member answers the route's empty_patch code (422): the document asks for one.
  it.each([
    ['patch', '/rundowns/{id}', {}, false],
    ['patch', '/rundowns/{id}/cues/{cue_id}', {}, false],
    ['patch', '/rundowns/{id}/mentions/{mention_id}', {}, false],
    ['patch', '/rundowns/{id}/output-message', {}, false],
    ['patch', '/rundowns/{id}/columns/{column_id}', { before_column_id: 'x' }, false],
    ['patch', '/rundowns/{id}/output-message', { visible: true }, true],
  ] as [string, string, unknown, boolean][])('%s %s %j: the document says accepted %s', (method, path, body, accepted) => {
    expect(bodyOf(method, path).json(body)).toBe(accepted);
  });

  // Rules the rundown service checks that JSON Schema states too: only a group has children, a child is no group, only a cue has cells.
  it.each([
    [{ title: 'T', cues: [{ title: 'a', children: [{ title: 'b' }] }] }, false],
    [{ title: 'T', cues: [{ type: 'group', children: [{ type: 'group' }] }] }, false],
    [{ title: 'T', columns: [{ name: 'S' }], cues: [{ type: 'heading', cells: { S: 'x' } }] }, false],
    [{ title: 'T', columns: [{ name: 'S' }], cues: [{ cells: { S: 'x' } }] }, true],
    [{ title: 'T', columns: [{ name: 'S' }, { name: 'S' }] }, false],
  ])('rundown create %j: the document says accepted %s', (body, accepted) => {
    expect(bodyOf('post', '/rundowns').json(body)).toBe(accepted);
  });
});
