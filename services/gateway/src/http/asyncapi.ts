import { z } from 'zod';
import { v0PushAuth, v0PushEvents, v0PushRefusals } from '@rundown/shared/core';
import type { PublicUrls } from '../config.js';
import { sseFrames } from '../events/frame-schemas.js';
import { EVENT_NAMES } from '../events/subscription.js';

type Schema = Record<string, unknown>;

/** AsyncAPI 3.0's default schema format is a superset of JSON Schema draft-07. */
function draft7(schema: z.ZodType): Schema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { target: 'draft-7', io: 'output', unrepresentable: 'any' }) as Schema;
  return rest;
}

const firstExample = (schema: Schema): unknown => (Array.isArray(schema.examples) ? schema.examples[0] : undefined);

const SSE_EXAMPLES: Partial<Record<keyof typeof sseFrames, unknown>> = {
  ready: { rundown_id: 'rd_01HZX3J8Q7', events: ['cue:fat', 'cell', 'status'], server_time: 1795370400000 },
  rundown: { change: 'updated', id: 'rd_01HZX3J8Q7' },
  cue: { change: 'created', id: 'cue_01HZX3K2' },
  column: { change: 'reordered', id: 'col_01HZX3A1' },
  cell: {
    change: 'updated',
    cue_id: 'cue_01HZX3K2',
    column_id: 'col_01HZX3A1',
    cell: { cue_id: 'cue_01HZX3K2', column_id: 'col_01HZX3A1', content: 'Good evening.', content_html: '<p>Good evening.</p>', created_at: '2026-11-22T17:40:00.000Z', updated_at: '2026-11-22T17:41:00.000Z' },
  },
  mention: { change: 'removed', id: 'men_01HZX3C4' },
  text_variable: { change: 'updated', id: 'guest_name', text_variable: { key: 'guest_name', value: 'Dr. Jane Doe', created_at: '2026-11-22T17:00:00.000Z', updated_at: '2026-11-22T17:41:00.000Z' } },
  heartbeat: { at: 1795370415000 },
  disconnect: { reason: 'lifetime' },
};

/** The example of an SSE frame's data: the table above, else the payload schema's own example. */
export function sseExample(name: keyof typeof sseFrames): unknown {
  return SSE_EXAMPLES[name] ?? firstExample(draft7(sseFrames[name].payload));
}

/**
 * The live events as an AsyncAPI 3.0 document, generated from the frame schemas of the v1 SSE
 * stream (events/frame-schemas.ts) and the v0 push channel's schemas (shared v0/push.ts).
 */
export function asyncApiDocument(urls: PublicUrls): Schema {
  const root = new URL(urls.base);
  const secure = root.protocol === 'https:';
  const messages: Record<string, Schema> = {};
  const sseRefs: Schema = {};
  for (const [name, def] of Object.entries(sseFrames) as [keyof typeof sseFrames, (typeof sseFrames)[keyof typeof sseFrames]][]) {
    const key = `sse_${name}`;
    const example = sseExample(name);
    messages[key] = {
      name,
      title: `SSE \`${name}\``,
      summary: def.summary,
      contentType: 'application/json',
      description: def.hasId
        ? 'Framed as `event: ' + name + '`, `id: <stream position>` (resume after it with `Last-Event-ID`), one `data:` line of JSON.'
        : 'Framed as `event: ' + name + '` and one `data:` line of JSON, without an `id`.',
      payload: draft7(def.payload),
      ...(example === undefined ? {} : { examples: [{ name: `${name}-example`, payload: example }] }),
    };
    sseRefs[name] = { $ref: `#/components/messages/${key}` };
  }
  const v0Refs: Schema = {};
  for (const [name, def] of Object.entries(v0PushEvents)) {
    const key = `v0_${name}`;
    const payload = draft7(def.payload);
    const inner = (payload.anyOf as Schema[] | undefined)?.[0] ?? payload;
    const example = firstExample(payload) ?? firstExample(inner);
    messages[key] = {
      name,
      title: `Socket.IO \`${name}\``,
      summary: def.summary,
      contentType: 'application/json',
      payload,
      ...(example === undefined ? {} : { examples: [{ name: `${name}-example`, payload: example }] }),
    };
    v0Refs[name] = { $ref: `#/components/messages/${key}` };
  }
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Rundown live events',
      version: '1.0.0',
      description:
        `Everything the service pushes: [the v1 server-sent events stream of a rundown](${urls.events}#channel-rundownEvents) and [the deprecated v0 Socket.IO channel](${urls.events}#channel-v0Push). ` +
        `HTTP API: [v1 reference](${urls.docs}), [error reference](${urls.errors}).`,
    },
    defaultContentType: 'application/json',
    servers: {
      v1: {
        host: root.host,
        pathname: '/v1',
        protocol: secure ? 'https' : 'http',
        description: 'Server-sent events (text/event-stream) over HTTP/1.1; authenticate with `Authorization: Bearer <ACCESS_TOKEN>` (VIEW role).',
        security: [{ $ref: '#/components/securitySchemes/bearer' }],
      },
      v0: {
        host: root.host,
        pathname: '/api-v0/socket.io',
        protocol: secure ? 'wss' : 'ws',
        description:
          'Socket.IO 4 (WebSocket or HTTP long-polling; behind a load balancer long-polling needs sticky sessions). Connect with path `/api-v0/socket.io` and ' +
          `\`auth: { rundownId, apiToken }\` (${JSON.stringify(draft7(v0PushAuth))}). A refused connection gets \`connect_error\` with one of: ` +
          `${v0PushRefusals.map((m) => `"${m}"`).join(', ')} (\`data.code\` is the v1 code). Messages sent by the client are ignored.`,
      },
    },
    channels: {
      rundownEvents: {
        address: '/rundowns/{id}/events',
        title: 'v1: a rundown’s live events (SSE)',
        description:
          `GET with \`?events=\` naming what to receive (${EVENT_NAMES.join(', ')}; \`rundown:fat\`, \`cue:fat\`, \`column:fat\` add the record; \`status\` always rides along). ` +
          'A stream opens with `ready` then a `status` snapshot; reconnect with `Last-Event-ID` to replay what was missed.',
        servers: [{ $ref: '#/servers/v1' }],
        parameters: { id: { description: 'The rundown id' } },
        messages: sseRefs,
      },
      v0Push: {
        address: '/',
        title: 'v0: a rundown’s push channel (Socket.IO, deprecated)',
        description: 'Accepted, a connection is sent `serverTime` alone (no state is sent on connect: fetch it over HTTP), then each change.',
        servers: [{ $ref: '#/servers/v0' }],
        messages: v0Refs,
      },
    },
    operations: {
      receiveRundownEvents: {
        action: 'receive',
        title: 'Follow a rundown (v1 SSE)',
        channel: { $ref: '#/channels/rundownEvents' },
        messages: Object.keys(sseRefs).map((name) => ({ $ref: `#/channels/rundownEvents/messages/${name}` })),
      },
      receiveV0Push: {
        action: 'receive',
        title: 'Follow a rundown (v0 Socket.IO)',
        channel: { $ref: '#/channels/v0Push' },
        messages: Object.keys(v0Refs).map((name) => ({ $ref: `#/channels/v0Push/messages/${name}` })),
      },
    },
    components: {
      messages,
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
    },
  };
}
