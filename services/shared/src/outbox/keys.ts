/**
 * Redis key names of the event streams (one place, for the relay and every reader).
 * - `events:rundown:<rundown id>`: the rundown's stream. Entry ids are assigned by Redis
 *   (`<ms>-<n>`), so they grow strictly and are the event ids SSE sends (Last-Event-ID). Fields:
 *   `src` (source service), `seq` (its outbox sequence number), `e` (the encoded Event).
 * - `events:rundown:<rundown id>:relayed`: a hash `source -> last relayed seq`, which makes a
 *   repeated append (a relay that died after appending but before deleting its rows) a no-op;
 *   its field `~trimmed` is the newest entry id that trimming removed (see isContinuous).
 * - `events:index`: every append of every rundown, as `r` (rundown id), `id` (the entry id in
 *   the rundown's stream) and `k` (the event's Kind, as a number; absent from entries appended
 *   before it was added), for consumers that follow all rundowns (runner, SSE fan-out, realtime).
 */
export const eventKeys = {
  rundown: (rundownId: string) => `events:rundown:${rundownId}`,
  relayed: (rundownId: string) => `events:rundown:${rundownId}:relayed`,
  index: 'events:index',
} as const;
