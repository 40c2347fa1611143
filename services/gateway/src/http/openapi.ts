import { z } from 'zod';
import { errorCatalogue, errorCodes, limits, plans, roleAtLeast, type ErrorCode } from '@rundown/shared/core';
import { IDEMPOTENCY_TTL_MS } from '../edge/idempotency.js';
import type { PublicUrls } from '../config.js';
import { WRITE_METHODS, type RouteDef } from './route.js';
import { viewerUrl } from './viewer.js';
import { mcpReference } from './mcp/tools.js';

type Schema = Record<string, unknown>;

/** The static routes of `{base_url}` that are not in the route table (served by the app itself). */
export const staticV1Routes: Pick<RouteDef, 'method' | 'path' | 'summary' | 'tag' | 'auth'>[] = [
  { method: 'get', path: '/openapi.json', summary: 'This OpenAPI 3.1 document', tag: 'Meta', auth: 'none' },
];

// Every auth.* code of the catalogue can answer an authenticated route.
const AUTH_CODES: ErrorCode[] = errorCodes.filter((code) => code.startsWith('auth.'));
const IDEMPOTENCY_CODES: ErrorCode[] = errorCodes.filter((code) => code.startsWith('idempotency.'));

/**
 * Every code a route can answer with: its own domain errors plus what the edge adds in front of
 * it (authentication, rate limit, body parsing, validation, role, idempotency, failures).
 */
export function routeErrorCodes(
  route: Pick<RouteDef, 'method' | 'auth' | 'role' | 'body' | 'bodyError' | 'emptyPatch' | 'query' | 'queryError' | 'errors'> & Partial<Pick<RouteDef, 'path'>>,
): ErrorCode[] {
  const codes = new Set<ErrorCode>();
  // Any request whose headers are over the limit is refused before routing (client-errors.ts).
  codes.add('request.headers_too_large');
  // A path parameter that is not valid percent-encoding (`%C0%AF`) never reaches the route: 404 `not_found`.
  if (route.path?.includes('{')) codes.add('not_found');
  if (route.auth !== 'none') {
    for (const code of AUTH_CODES) if (!(code === 'auth.query_token_not_allowed' && route.auth === 'control')) codes.add(code);
    codes.add('service_unavailable');
  }
  codes.add('rate_limit.exceeded');
  if (route.role && !roleAtLeast('VIEW', route.role)) codes.add('forbidden');
  if (WRITE_METHODS.has(route.method)) {
    for (const code of IDEMPOTENCY_CODES) codes.add(code);
    codes.add('payload.too_large');
    codes.add('unsupported_media_type');
    codes.add('bad_request'); // malformed JSON
    codes.add('service_unavailable'); // the idempotency store did not answer
  }
  if (route.body) codes.add(route.bodyError ?? 'bad_request');
  if (route.emptyPatch) codes.add(route.emptyPatch);
  if (route.query) codes.add(route.queryError ?? 'bad_request');
  for (const code of route.errors ?? []) codes.add(code);
  codes.add('internal.unhandled');
  return [...codes].sort((a, b) => errorCatalogue[a].status - errorCatalogue[b].status || a.localeCompare(b));
}

/**
 * A body schema's own examples (`.meta({ examples })` beside the schema), as the media type's
 * examples: zod leaves them out of an input JSON schema that holds a transform.
 */
function mediaExamples(schema: z.ZodType): Schema {
  const examples = schema.meta()?.examples;
  if (!Array.isArray(examples) || examples.length === 0) return {};
  return { examples: Object.fromEntries(examples.map((value: unknown, i) => [`example${i + 1}`, { value }])) };
}

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Schema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as Schema;
  return rest;
}

/** `{ name: schema }` of a query object, one OpenAPI parameter each. */
function queryParameters(schema: z.ZodType): Schema[] {
  const json = jsonSchema(schema, 'input');
  const properties = (json.properties ?? {}) as Record<string, Schema>;
  const required = new Set((json.required ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => ({
    name,
    in: 'query',
    required: required.has(name),
    ...(typeof property.description === 'string' ? { description: property.description } : {}),
    schema: property,
  }));
}

/** What the problem document of `code` looks like (the catalogue's own title and detail), once per code in components. */
function problemExample(code: ErrorCode, instance: string, urls: PublicUrls): Schema {
  const entry = errorCatalogue[code];
  return {
    type: `${urls.errors}#${code}`,
    title: entry.title,
    status: entry.status,
    code,
    detail: entry.detail,
    instance,
    request_id: 'req_5f0c8a3e9b1d4c7a2e6f0b8d',
    server_time: 1795370400000,
    spec_url: urls.spec,
    documentation_url: `${urls.errors}#${code}`,
  };
}

function problemResponse(codes: ErrorCode[], urls: PublicUrls): Schema {
  const lines = codes.map((c) => `- [\`${c}\`](${urls.errors}#${c}): ${errorCatalogue[c].detail}`);
  return {
    description: `${errorCatalogue[codes[0]!].title}. Codes:\n${lines.join('\n')}`,
    headers: rateLimitHeaderRefs(codes.includes('rate_limit.exceeded')),
    content: {
      'application/problem+json': {
        schema: { allOf: [{ $ref: '#/components/schemas/Problem' }, { type: 'object', properties: { code: { enum: codes } } }] },
        examples: Object.fromEntries(codes.map((c) => [c, { $ref: `#/components/examples/${c}` }])),
      },
    },
    'x-error-codes': codes,
  };
}

function rateLimitHeaderRefs(withRetryAfter: boolean): Schema {
  return {
    'RateLimit-Limit': { $ref: '#/components/headers/RateLimit-Limit' },
    'RateLimit-Remaining': { $ref: '#/components/headers/RateLimit-Remaining' },
    'RateLimit-Reset': { $ref: '#/components/headers/RateLimit-Reset' },
    'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' },
    ...(withRetryAfter ? { 'Retry-After': { $ref: '#/components/headers/Retry-After' } } : {}),
  };
}

const ISSUE_SCHEMA: Schema = {
  type: 'object',
  required: ['path', 'message', 'code'],
  properties: {
    path: { type: 'array', items: { type: ['string', 'integer'] } },
    message: { type: 'string' },
    code: { type: 'string' },
  },
};

/** The problem document's JSON Schema standing alone (no components to refer to): the MCP tools' error results. */
export const problemJsonSchema = (): Schema => problemSchema(ISSUE_SCHEMA);

function problemSchema(issue: Schema = { $ref: '#/components/schemas/Issue' }): Schema {
  return {
    type: 'object',
    description: 'An RFC 9457 problem document; clients branch on `code`.',
    required: ['type', 'title', 'status', 'code', 'detail', 'instance', 'request_id', 'server_time', 'spec_url', 'documentation_url'],
    properties: {
      type: { type: 'string', format: 'uri', description: '{docs_url}/api-v1/errors#<code>' },
      title: { type: 'string', description: 'HTTP reason phrase' },
      status: { type: 'integer' },
      code: { type: 'string', enum: [...errorCodes] },
      detail: { type: 'string', description: 'Human-readable cause and corrective action; wording may change.' },
      instance: { type: 'string', description: 'Request path' },
      request_id: { type: 'string', pattern: '^req_[0-9a-f]{24}$' },
      server_time: { type: 'integer', description: 'ms since the UNIX epoch' },
      spec_url: { type: 'string', format: 'uri' },
      documentation_url: { type: 'string', format: 'uri', description: 'Same as `type`' },
      details: {
        type: 'object',
        description: 'Structured data; validation problems carry `issues`.',
        properties: { issues: { type: 'array', items: issue } },
        additionalProperties: true,
      },
    },
  };
}

function envelope(data: Schema): Schema {
  return {
    type: 'object',
    required: ['ok', 'message', 'data', 'meta'],
    properties: {
      ok: { const: true },
      message: { const: 'OK' },
      data,
      included: { type: 'object', additionalProperties: true },
      meta: { $ref: '#/components/schemas/Meta' },
    },
  };
}

function operation(route: RouteDef | (typeof staticV1Routes)[number], urls: PublicUrls): Schema {
  const r = route as RouteDef;
  const pathParams = [...route.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({ name, in: 'path', required: true, schema: { type: 'string' } }));
  const parameters: Schema[] = [...pathParams, ...(r.query ? queryParameters(r.query) : [])];
  if (route.auth === 'control') {
    parameters.push({
      name: 'token',
      in: 'query',
      required: false,
      description: 'The access token, accepted instead of the Authorization header on the control surface only.',
      schema: { type: 'string' },
    });
  }
  if (WRITE_METHODS.has(route.method)) parameters.push({ $ref: '#/components/parameters/IdempotencyKey' });

  const responses: Schema = {};
  if (r.successStatus === 204) {
    responses['204'] = { description: 'Done; no body.', headers: rateLimitHeaderRefs(false) };
  } else if (r.stream) {
    responses['200'] = {
      description: `${r.stream.description} Every frame, its schema and an example: [live events](${urls.events}) ([AsyncAPI 3 document](${urls.asyncApi})).`,
      headers: rateLimitHeaderRefs(false),
      content: { [r.stream.mediaType]: { schema: { type: 'string' } } },
    };
  } else if (route.path === '/openapi.json') {
    responses['200'] = { description: 'The OpenAPI document', headers: rateLimitHeaderRefs(false), content: { 'application/json': { schema: { type: 'object' } } } };
  } else {
    const headers: Schema = rateLimitHeaderRefs(false);
    if (r.successStatus === 201) headers.Location = { description: 'Address of the created resource', schema: { type: 'string', format: 'uri' } };
    const descriptions: Record<number, string> = { 200: 'OK', 201: 'Created', 202: 'Accepted; done in the background' };
    responses[String(r.successStatus ?? 200)] = {
      description: descriptions[r.successStatus ?? 200]!,
      headers,
      content: { 'application/json': { schema: envelope(r.response ? jsonSchema(r.response, 'output') : {}) } },
    };
    if (r.alternative) {
      const ok = responses['200'] as Schema;
      ok.description = `OK. As JSON (the default), or: ${r.alternative.description}`;
      (ok.content as Schema)[r.alternative.mediaType] = { schema: { type: 'string', description: r.alternative.description } };
    }
  }
  const codes = routeErrorCodes({ ...r, errors: r.errors ?? [] });
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) byStatus.set(errorCatalogue[code].status, [...(byStatus.get(errorCatalogue[code].status) ?? []), code]);
  for (const [s, list] of [...byStatus].sort(([a], [b]) => a - b)) responses[String(s)] = problemResponse(list, urls);

  const op: Schema = {
    operationId: `${route.method}${route.path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
    summary: route.summary,
    tags: [route.tag],
    ...(parameters.length ? { parameters } : {}),
    responses,
    'x-error-codes': codes,
  };
  if (r.role) op['x-required-role'] = r.role;
  if (route.auth === 'none') op.security = [];
  else if (route.auth === 'control') op.security = [{ bearerAuth: [] }, { queryToken: [] }];
  if (r.body) {
    const schema = jsonSchema(r.body, 'input');
    // A change with no member is refused with the route's `emptyPatch` code: at least one member.
    if (r.emptyPatch && !(Array.isArray(schema.required) && schema.required.length)) schema.minProperties = 1;
    op.requestBody = {
      required: !r.bodyOptional,
      content: {
        'application/json': { schema, ...mediaExamples(r.body) },
        ...(r.textBody ? { [r.textBody.mediaType]: { schema: { type: 'string', description: r.textBody.description } } } : {}),
      },
    };
  }
  if (r.role) op.description = `Needs the ${r.role} role.${route.auth === 'control' ? ' The token may be sent as `?token=`.' : ''}`;
  return op;
}

/**
 * The OpenAPI 3.1 document of the whole v1 API, built from the route table: the same zod schemas
 * that validate requests describe them here, and every error code each route can answer with is
 * listed (its own plus the edge's), each linked to its anchor in the error reference.
 */
export function openApiDocument(routes: RouteDef[], urls: PublicUrls): Schema {
  const paths: Record<string, Record<string, Schema>> = {};
  for (const route of [...routes, ...staticV1Routes]) {
    (paths[route.path] ??= {})[route.method] = operation(route as RouteDef, urls);
  }
  const tags = [...new Set([...routes, ...staticV1Routes].map((r) => r.tag))].map((name) => ({ name }));
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'Rundown API',
      version: '1.0.0',
      description:
        'The v1 HTTP API of the show-control rundown service. Every error is an RFC 9457 problem document with a stable `code`; ' +
        `see the [error reference](${urls.errors}). Rate limits are per team and per minute (free ${plans.free.requestsPerMinute}, paid ${plans.paid.requestsPerMinute}); ` +
        `every answer carries RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset. Writes accept an Idempotency-Key of at most ${limits.idempotencyKeyChars} characters.\n\n` +
        `Live changes: [the live events](${urls.events}) (v1 server-sent events and the v0 Socket.IO channel, also as an [AsyncAPI 3 document](${urls.asyncApi})). ` +
        `The deprecated v0 HTTP API is documented beside this one ([its OpenAPI document](${urls.v0Spec})).\n\n` +
        `Stage screen: \`${viewerUrl(urls)}/{rundown_id}#token={token}\` is a page for a stage, presenter or control-room screen ` +
        '(the current cue and its countdown, progress, the next cue, the output message, the time of day, the over/under), live. ' +
        'It needs a VIEW token, best scoped to the one rundown: `npm run admin -- tokens mint <team_id> --role VIEW --rundown <rundown_id>` ' +
        '(the admin API: `POST /admin/teams/{team_id}/tokens` with `{"role": "VIEW", "rundown_id": "..."}`). The token goes after `#`, so it reaches ' +
        'no server log. Options after it: `&show=countdown` (or any of title, subtitle, countdown, progress, next, message, clock, over-under, state; ' +
        '`hide=` the opposite), `&theme=light`, `&mirror=1` (a teleprompter glass), `&clock=24h`.\n\n' +
        mcpReference(urls),
    },
    externalDocs: { description: 'Error reference', url: urls.errors },
    servers: [{ url: urls.base }],
    security: [{ bearerAuth: [] }],
    tags,
    paths,
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'Authorization: Bearer <ACCESS_TOKEN>' },
        queryToken: { type: 'apiKey', in: 'query', name: 'token', description: 'Accepted on the control surface only.' },
      },
      parameters: {
        IdempotencyKey: {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description: `Makes the write idempotent for ${IDEMPOTENCY_TTL_MS / 3_600_000} hours, per team.`,
          schema: { type: 'string', minLength: 1, maxLength: limits.idempotencyKeyChars },
        },
      },
      headers: {
        'RateLimit-Limit': { description: 'Requests allowed in the window', schema: { type: 'integer' } },
        'RateLimit-Remaining': { description: 'Requests left in the window', schema: { type: 'integer' } },
        'RateLimit-Reset': { description: 'Seconds until the window resets', schema: { type: 'integer' } },
        'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer' } },
        'X-Request-Id': { description: 'Correlation id (req_ + 24 hex)', schema: { type: 'string' } },
      },
      examples: Object.fromEntries(errorCodes.map((c) => [c, { summary: c, value: problemExample(c, '/v1/rundowns/rd_01HZX3J8Q7', urls) }])),
      schemas: {
        Problem: problemSchema(),
        Issue: ISSUE_SCHEMA,
        Meta: {
          type: 'object',
          required: ['request_id', 'server_time', 'side_effects'],
          properties: {
            request_id: { type: 'string' },
            server_time: { type: 'integer' },
            side_effects: { type: 'array', items: { type: 'object', required: ['type'], properties: { type: { type: 'string' } } } },
          },
        },
      },
    },
  };
}
