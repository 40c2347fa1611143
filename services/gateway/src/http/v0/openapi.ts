import { errorCatalogue, errorCodes, type ErrorCode } from '@rundown/shared/core';
import type { PublicUrls } from '../../config.js';
import type { RouteDef } from '../route.js';
import { patchOutputMessageBody } from '../../wire/schemas/output-message.js';
import { z } from 'zod';
import { V0_ACTIONS, V0_ADJUSTMENTS, V0_VISIBILITY } from './router.js';

type Schema = Record<string, unknown>;

/** One v0 operation: where it is served and the v1 route it maps onto (whose domain errors it shares). */
export interface V0Operation {
  method: 'get' | 'post' | 'patch';
  /** OpenAPI form, under `/api-v0/rundown`. */
  path: string;
  summary: string;
  v1: { method: RouteDef['method']; path: string };
  query?: Schema[];
  body?: z.ZodType;
}

const ACTION_SUMMARIES: Record<(typeof V0_ACTIONS)[number], string> = {
  start: 'Start the show (or resume it)',
  pause: 'Pause the active cue',
  next: 'Go to the next cue',
  previous: 'Go back to the previous cue',
  end: 'End the show',
};

/** The v0 surface, read from the same tables as the router. */
export function v0Operations(): V0Operation[] {
  return [
    ...V0_ACTIONS.map((verb) => ({
      method: 'get' as const,
      path: `/{id}/${verb}`,
      summary: ACTION_SUMMARIES[verb],
      v1: { method: 'post' as const, path: `/rundowns/{id}/action:${verb}` },
    })),
    ...V0_ADJUSTMENTS.map(([name, sign]) => ({
      method: 'get' as const,
      path: `/{id}/cues/active/${name}`,
      summary: `${sign > 0 ? 'Lengthen' : 'Shorten'} the active cue by \`amount\` ms`,
      v1: { method: 'post' as const, path: '/rundowns/{id}/action:adjust-duration' },
      query: [
        {
          name: 'amount',
          in: 'query',
          required: true,
          description: 'Milliseconds, a positive whole number (at most 7 days)',
          schema: { type: 'integer', minimum: 1, maximum: 604_800_000 },
          example: 30000,
        },
      ],
    })),
    ...V0_VISIBILITY.map(([name, visible]) => ({
      method: 'post' as const,
      path: `/{id}/output-message/${name}`,
      summary: visible === undefined ? 'Toggle the output message’s visibility' : `${visible ? 'Show' : 'Hide'} the output message`,
      v1: { method: 'patch' as const, path: '/rundowns/{id}/output-message' },
    })),
    {
      method: 'patch',
      path: '/{id}/output-message',
      summary: 'Change the output message (text, visibility, colour, style)',
      v1: { method: 'patch', path: '/rundowns/{id}/output-message' },
      body: patchOutputMessageBody,
    },
  ];
}

const EDGE_CODES: ErrorCode[] = [...errorCodes.filter((c) => c.startsWith('auth.') && c !== 'auth.query_token_not_allowed'), 'rate_limit.exceeded', 'service_unavailable', 'internal.unhandled'];

function errorResponse(codes: ErrorCode[], urls: PublicUrls): Schema {
  return {
    description: `${errorCatalogue[codes[0]!].title}. \`code\` is the v1 code: ${codes.map((c) => `[\`${c}\`](${urls.errors}#${c})`).join(', ')}`,
    content: {
      'application/json': {
        schema: { allOf: [{ $ref: '#/components/schemas/V0Error' }, { type: 'object', properties: { code: { enum: codes } } }] },
        example: { ok: false, error: codes[0]!.startsWith('auth.') ? 'Invalid API token' : errorCatalogue[codes[0]!].detail, code: codes[0] },
      },
    },
  };
}

/**
 * The deprecated v0 HTTP API (docs/api-decisions.md#v0) as an OpenAPI 3.1 document: its operations from the
 * router's tables, each with the domain errors of the v1 route it maps onto plus the edge's.
 */
export function v0OpenApiDocument(v1Routes: RouteDef[], urls: PublicUrls): Schema {
  const root = urls.base.replace(/\/v1$/, '');
  const paths: Record<string, Record<string, Schema>> = {};
  for (const op of v0Operations()) {
    const v1 = v1Routes.find((r) => r.method === op.v1.method && r.path === op.v1.path);
    if (!v1) throw new Error(`v0 ${op.method} ${op.path}: no v1 route ${op.v1.method} ${op.v1.path}`);
    const codes = new Set<ErrorCode>([...EDGE_CODES, ...(v1.errors ?? [])]);
    if (op.query) codes.add('bad_request');
    if (op.body) {
      codes.add('messages.invalid_payload');
      codes.add('messages.empty_patch');
      codes.add('bad_request');
      codes.add('payload.too_large');
      codes.add('unsupported_media_type');
    }
    const byStatus = new Map<number, ErrorCode[]>();
    for (const code of [...codes].sort()) byStatus.set(errorCatalogue[code].status, [...(byStatus.get(errorCatalogue[code].status) ?? []), code]);
    const responses: Schema = {
      '200': {
        description: 'Done',
        headers: { 'RateLimit-Limit': { $ref: '#/components/headers/RateLimit-Limit' }, 'RateLimit-Remaining': { $ref: '#/components/headers/RateLimit-Remaining' } },
        content: { 'application/json': { schema: { $ref: '#/components/schemas/V0Ok' }, example: { ok: true } } },
      },
    };
    for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) responses[String(status)] = errorResponse(list, urls);
    (paths[op.path] ??= {})[op.method] = {
      operationId: `v0${op.method}${op.path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      summary: op.summary,
      description: `Deprecated: use v1 \`${op.v1.method.toUpperCase()} ${op.v1.path}\`.`,
      deprecated: true,
      tags: ['v0 show control'],
      parameters: [{ name: 'id', in: 'path', required: true, description: 'The rundown id', schema: { type: 'string' } }, ...(op.query ?? [])],
      ...(op.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: z.toJSONSchema(op.body, { target: 'draft-2020-12', io: 'input', unrepresentable: 'any' }) } } } }
        : {}),
      responses,
      'x-error-codes': [...codes].sort(),
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Rundown API v0 (deprecated)',
      version: '0.0.0',
      description:
        'The frozen legacy API: show control by GET and the output message. Authenticate with the team’s v0 token (`?token=` or `Authorization: Bearer`); ' +
        'each team has a sliding budget of 60 v0 requests per minute, shared with Socket.IO connections. Errors are `{ ok: false, error, code }`, ' +
        `where \`code\` is the v1 code ([error reference](${urls.errors})). The v0 push channel (Socket.IO) is on [the live events page](${urls.events}).`,
    },
    servers: [{ url: `${root}/api-v0/rundown` }],
    security: [{ v0Query: [] }, { v0Bearer: [] }],
    tags: [{ name: 'v0 show control' }],
    paths,
    components: {
      securitySchemes: {
        v0Query: { type: 'apiKey', in: 'query', name: 'token', description: 'The team’s v0 token' },
        v0Bearer: { type: 'http', scheme: 'bearer', description: 'The team’s v0 token' },
      },
      headers: {
        'RateLimit-Limit': { description: 'v0 requests allowed per minute (the team’s sliding window)', schema: { type: 'integer' } },
        'RateLimit-Remaining': { description: 'v0 requests left in the window', schema: { type: 'integer' } },
      },
      schemas: {
        V0Ok: { type: 'object', required: ['ok'], properties: { ok: { const: true } } },
        V0Error: {
          type: 'object',
          required: ['ok', 'error', 'code'],
          properties: { ok: { const: false }, error: { type: 'string', description: 'Human-readable (e.g. "Invalid API token")' }, code: { type: 'string', enum: [...errorCodes] } },
        },
      },
    },
  };
}
