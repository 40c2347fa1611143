import { eventsQuery, type Subscription } from '../../events/subscription.js';
import type { LiveEvents } from '../../events/live-events.js';
import { presentedToken } from '../middleware/authenticate.js';
import { defineRoute, type RouteDef } from '../route.js';

const description = [
  'Server-sent events. Frames: `ready` { rundown_id, events, server_time } then a `status` snapshot;',
  '`status` (the status object) on every runner change and deadline; `rundown`, `cue`, `column` { change, id, <record>? (`:fat`) };',
  '`cell` { change, cue_id, column_id, cell }; `mention`, `text_variable`, `output_message` with their record;',
  '`timing` (only with `events=timing`; after `status` in the opening snapshot) the timing object of `GET /rundowns/{id}/timing`, on every runner change and every edit that changes the plan;',
  '`heartbeat` { at } every 15 s (no id); `disconnect` { reason: lifetime | token_revoked | token_expired | rundown_removed }, then the server closes.',
  'Every frame but `heartbeat` has an `id:`; reconnect with `Last-Event-ID` to replay what was missed. The opening request counts once',
  'against the rate limit; the stream does not.',
].join(' ');

/** `GET /rundowns/{id}/events`: the v1 live events stream (bearer header only). */
export function eventRoutes(live: LiveEvents): RouteDef[] {
  return [
    defineRoute<undefined, Subscription>({
      method: 'get',
      path: '/rundowns/{id}/events',
      summary: 'Follow a rundown’s changes and the show’s status live (text/event-stream)',
      tag: 'Live events',
      auth: 'bearer',
      role: 'VIEW',
      query: eventsQuery,
      errors: ['rundowns.not_found'],
      stream: { mediaType: 'text/event-stream', description },
      handler: async ({ params, query, principal, caller, req, res }) => {
        await live.open({ rundownId: params.id!, subscription: query, principal, token: presentedToken(req, 'bearer'), caller, req, res });
        return { streamed: true };
      },
    }),
  ];
}
