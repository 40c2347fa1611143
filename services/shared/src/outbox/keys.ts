/**
 * Redis key names of the event streams (one place, for the relay and every reader).
 * Every key of a rundown carries its hash tag `{<rundown id>}` (redis.ts `rundownTag`): one Redis
 * Cluster slot for everything one rundown owns, so no script is cross-slot.
 * - `events:rundown:{<rundown id>}`: the rundown's stream. Entry ids are assigned by Redis
 *   (`<ms>-<n>`), so they grow strictly and are the event ids SSE sends (Last-Event-ID). Fields:
 *   `src` (source service), `seq` (its outbox sequence number), `e` (the encoded Event).
 * - `events:rundown:{<rundown id>}:relayed`: a hash `source -> last relayed seq`, which makes a
 *   repeated append (a relay that died after appending but before deleting its rows) a no-op;
 *   its field `~trimmed` is the newest entry id that trimming removed (see isContinuous), and
 *   `~ix:<source>` the source's last index entry (append-script.ts: re-indexed after a crash).
 * - `events:index`: one entry per relayed run of a rundown's events (one relay call's appends to
 *   it), as `r` (rundown id), `id` (the run's last entry id in the rundown's stream) and `k` (the
 *   run's distinct Kinds, as numbers joined by commas; absent from entries appended before it was
 *   added, which were one event each), for consumers that follow all rundowns (runner, realtime).
 */
export const eventKeys = {
  rundown: (rundownId: string) => `events:rundown:{${rundownId}}`,
  relayed: (rundownId: string) => `events:rundown:{${rundownId}}:relayed`,
  index: 'events:index',
} as const;
