import type { RedisClient } from '../redis.js';
import { decodeEvent, type Event, type Kind } from './codec.js';
import { eventKeys } from './keys.js';

/** An event as read from its rundown's stream: `id` is its position there (`<ms>-<n>`, the SSE id). */
export interface StreamedEvent {
  id: string;
  event: Event;
}

/**
 * An index entry: rundown `rundown_id` has new events, of `kinds`, up to `event_id` in its stream
 * (one entry per relayed run of a rundown's events, however many it holds).
 */
export interface IndexEntry {
  id: string;
  rundown_id: string;
  event_id: string;
  /**
   * Undefined for an entry appended before the index carried kinds (one event per entry then):
   * fetch the event to know.
   */
  kinds: Kind[] | undefined;
}

export interface ReadOptions {
  /** At most this many entries (default 100). */
  count?: number;
  /** Wait up to this long for the first entry when none is there yet (omitted: answer at once). */
  blockMs?: number;
}

/** Stream ids compare as (ms, n) pairs; `'0-0'` is before everything. */
export function compareEventIds(a: string, b: string): number {
  const [am = 0, an = 0] = a.split('-').map(Number);
  const [bm = 0, bn = 0] = b.split('-').map(Number);
  return am - bm || an - bn;
}

type RawEntries = [Buffer, Buffer[]][];

function fields(raw: Buffer[]): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (let i = 0; i + 1 < raw.length; i += 2) out.set(raw[i]!.toString(), raw[i + 1]!);
  return out;
}

/**
 * The encoded event of a raw stream entry (`[id, [field, value, ...]]`, as XRANGE/XREAD answer with
 * buffers; the event is field `e`): `encodedEventKind` reads its kind without decoding it,
 * `decodeEvent` decodes it.
 */
export function streamEntryEvent([, raw]: [Buffer, Buffer[]]): Buffer {
  return fields(raw).get('e') ?? Buffer.alloc(0);
}

/** One raw stream entry, decoded. */
export function decodeStreamEntry(entry: [Buffer, Buffer[]]): StreamedEvent {
  return { id: entry[0].toString(), event: decodeEvent(streamEntryEvent(entry)) };
}

/** The id of the newest event in the rundown's stream (`'0-0'` when it holds none). */
export async function latestEventId(redis: RedisClient, rundownId: string): Promise<string> {
  const [last] = await redis.xrevrange(eventKeys.rundown(rundownId), '+', '-', 'COUNT', 1);
  return last?.[0] ?? '0-0';
}

async function xread(redis: RedisClient, key: string, after: string, options: ReadOptions): Promise<RawEntries> {
  const args: (string | number)[] = ['COUNT', options.count ?? 100];
  if (options.blockMs !== undefined) args.push('BLOCK', options.blockMs);
  const reply = await (redis.xreadBuffer as (...a: (string | number)[]) => Promise<[Buffer, RawEntries][] | null>)(...args, 'STREAMS', key, after);
  return reply?.[0]?.[1] ?? [];
}

/**
 * The rundown's events after `after` (an event id; `'0-0'` for the oldest kept; `'$'` for only
 * new ones, with `blockMs`), decoded, in order. A caller replaying from Last-Event-ID passes it
 * here; when `after` is older than the oldest kept entry (trimmed), the first entry answered is the
 * oldest kept one, which `isContinuous` can check.
 */
export async function readRundownEvents(redis: RedisClient, rundownId: string, after: string, options: ReadOptions = {}): Promise<StreamedEvent[]> {
  const entries = await xread(redis, eventKeys.rundown(rundownId), after, options);
  return entries.map(decodeStreamEntry);
}

/**
 * Whether the rundown's stream still holds everything after `after` (nothing was trimmed in between),
 * so a replay from it is complete; otherwise a consumer must resynchronise from a full read.
 */
export async function isContinuous(redis: RedisClient, rundownId: string, after: string): Promise<boolean> {
  // One round trip: the oldest kept entry and the trim mark, read together.
  const replies = await redis.pipeline().xrange(eventKeys.rundown(rundownId), '-', '+', 'COUNT', 1).hget(eventKeys.relayed(rundownId), '~trimmed').exec();
  const [[rangeError, range] = [], [markError, trimmed] = []] = replies ?? [];
  if (rangeError || markError) throw rangeError ?? markError;
  // An empty stream after an id: nothing was kept, so only the very start ('0-0') is continuous.
  if (!(range as unknown[] | undefined)?.length) return after === '0-0';
  return trimmed === null || trimmed === undefined || compareEventIds(after, trimmed as string) >= 0;
}

/** Entries of the index (every append of every rundown) after `after`; `'$'` with `blockMs` to follow. */
export async function readEventIndex(redis: RedisClient, after: string, options: ReadOptions = {}): Promise<IndexEntry[]> {
  const entries = await xread(redis, eventKeys.index, after, options);
  return entries.map(([id, raw]) => {
    const f = fields(raw);
    const kinds = f.get('k');
    return {
      id: id.toString(),
      rundown_id: f.get('r')?.toString() ?? '',
      event_id: f.get('id')?.toString() ?? '',
      kinds: kinds === undefined ? undefined : kinds.toString().split(',').map((kind) => Number(kind) as Kind),
    };
  });
}
