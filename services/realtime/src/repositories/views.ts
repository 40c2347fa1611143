import { AppError, eventKeys, latestEventId, newRequestId, randomToken, type CallerContext, type RedisClient } from '@rundown/shared/core';
import { Phase } from '@rundown/shared/proto/rundown/runner/v1/runner';
import type { ContentSource } from '../domain/content-source.js';
import { timesnapOf, v0Cue, v0Rundown, type V0View } from '../domain/v0-records.js';

const VIEW_TTL_SECONDS = 7 * 24 * 3600;
const LOCK_MS = 5_000;
/** What a lock attempt answers while another holder has the lock. */
const BUSY = Symbol('busy');

const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;
// KEYS: lock, view, the rundown's event stream. No view: nothing to do (0). Busy: 2. Lock taken: 1,
// the view, and the stream's entries after the view's position (at most ARGV[3]) read in the same
// step, so the event path costs one round trip before its emits instead of two.
const ACQUIRE_AND_READ = `
local view = redis.call('GET', KEYS[2])
if not view then return {0} end
if not redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then return {2} end
local pos = cjson.decode(view).pos
return {1, view, redis.call('XRANGE', KEYS[3], '(' .. pos, '+', 'COUNT', tonumber(ARGV[3]))}`;
// KEYS: view, lock. Stores the view and releases the lock in one step (after the publishes before it).
const PUT_AND_RELEASE = `
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
if redis.call('GET', KEYS[2]) == ARGV[3] then redis.call('DEL', KEYS[2]) end
return 1`;

/** Stream entries as Redis sends them: `[id, [field, value, ...]]`. */
export type StreamEntries = [Buffer, Buffer[]][];

type Scripted = {
  v0ReleaseLock(key: string, token: string): Promise<number>;
  v0AcquireAndReadBuffer(lock: string, view: string, stream: string, token: string, ttl: number, count: number): Promise<[0] | [1, Buffer, StreamEntries] | [2]>;
  v0PutAndRelease(view: string, lock: string, json: string, ttl: number, token: string): Promise<number>;
};

/**
 * The v0 view of each rundown in Redis (`v0:view:{<id>}`: what a connecting client is sent, and the
 * stream position it reflects), shared by every realtime replica, and the per-rundown lock
 * (`v0:lock:{<id>}`) under which a view is built, advanced by events (and their emits published),
 * or read for a connecting client. The lock is what makes "emit, then advance the position" atomic
 * for everyone else: a client joins while nobody is between the two.
 *
 * Every command goes over the one connection the Socket.IO adapter publishes on, so a publish
 * reaches Redis before the lock release that follows it.
 */
export class ViewStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly content: ContentSource,
  ) {
    if (!('v0ReleaseLock' in redis)) {
      redis.defineCommand('v0ReleaseLock', { numberOfKeys: 1, lua: RELEASE });
      redis.defineCommand('v0AcquireAndRead', { numberOfKeys: 3, lua: ACQUIRE_AND_READ });
      redis.defineCommand('v0PutAndRelease', { numberOfKeys: 2, lua: PUT_AND_RELEASE });
    }
  }

  /** The shared connection (the adapter publishes on it too), for the stream reads done under the lock. */
  get redisClient(): RedisClient {
    return this.redis;
  }

  private key = (rundownId: string) => `v0:view:{${rundownId}}`;

  /**
   * Runs `send` (synchronous) with the shared connection's socket corked, so every command it issues
   * (the adapter's publishes of one change: `currentCue`, `nextCue`, `timesnap`) leaves for Redis in
   * one write. Sent one by one, Redis could read and relay them apart, and each other replica then
   * handled them in separate ticks: a write per message to each of its clients instead of one per
   * change (socket/write-coalescing.ts merges only what one tick emits). Order is unchanged.
   */
  together<T>(send: () => T): T {
    // One server's socket (a cluster client has one per node: its writes are not corked).
    const socket = this.redis.status === 'ready' && 'stream' in this.redis ? this.redis.stream : undefined;
    socket?.cork();
    try {
      return send();
    } finally {
      socket?.uncork();
    }
  }

  async get(rundownId: string): Promise<V0View | undefined> {
    const raw = await this.redis.get(this.key(rundownId));
    return raw ? (JSON.parse(raw) as V0View) : undefined;
  }

  async put(rundownId: string, view: V0View): Promise<void> {
    await this.redis.set(this.key(rundownId), JSON.stringify(view), 'EX', VIEW_TTL_SECONDS);
  }

  async remove(rundownId: string): Promise<void> {
    await this.redis.del(this.key(rundownId));
  }

  private get scripts(): Scripted {
    return this.redis as unknown as Scripted;
  }

  /**
   * The event path in two round trips: take the lock, read the view and the stream's entries after
   * its position in one script (nothing when the rundown has no view: nobody watches it), run
   * `work` (it publishes; it may read further pages itself), then store what it answers and release
   * in one script. `work` answering undefined stores nothing.
   */
  async advanceLocked(rundownId: string, pageSize: number, work: (view: V0View, firstPage: StreamEntries) => Promise<V0View | undefined>): Promise<void> {
    const lock = `v0:lock:{${rundownId}}`;
    const token = randomToken();
    const got = await this.untilFree(rundownId, async () => {
      const reply = await this.scripts.v0AcquireAndReadBuffer(lock, this.key(rundownId), eventKeys.rundown(rundownId), token, LOCK_MS, pageSize);
      return reply[0] === 2 ? BUSY : reply[0] === 1 ? { view: JSON.parse(reply[1].toString()) as V0View, entries: reply[2] } : undefined;
    });
    if (!got) return;
    let next: V0View | undefined;
    try {
      next = await work(got.view, got.entries);
    } catch (error) {
      await this.scripts.v0ReleaseLock(lock, token).catch(() => undefined);
      throw error;
    }
    if (next) await this.scripts.v0PutAndRelease(this.key(rundownId), lock, JSON.stringify(next), VIEW_TTL_SECONDS, token);
    else await this.scripts.v0ReleaseLock(lock, token);
  }

  /** Runs `work` holding the rundown's lock (waiting for it, up to the lock's lifetime and a bit). */
  async locked<T>(rundownId: string, work: () => Promise<T>): Promise<T> {
    const key = `v0:lock:{${rundownId}}`;
    const token = randomToken();
    await this.untilFree(rundownId, async () => ((await this.redis.set(key, token, 'PX', LOCK_MS, 'NX')) === 'OK' ? true : BUSY));
    try {
      return await work();
    } finally {
      await this.scripts.v0ReleaseLock(key, token).catch(() => undefined);
    }
  }

  /** Repeats `attempt` with a short backoff while the lock is taken, up to the lock's lifetime and a bit. */
  private async untilFree<T>(rundownId: string, attempt: () => Promise<T | typeof BUSY>): Promise<T> {
    const deadline = Date.now() + LOCK_MS * 2;
    for (let wait = 1; ; wait = Math.min(wait * 2, 20)) {
      const got = await attempt();
      if (got !== BUSY) return got;
      if (Date.now() > deadline) throw new AppError('service_unavailable', { detail: `The v0 view of ${rundownId} stayed locked.` });
      await new Promise((r) => setTimeout(r, wait));
    }
  }

  /**
   * The view from the rundown and runner services, positioned at the stream's newest event read
   * before them (events after it are applied again on top; applying one the state already shows
   * changes nothing). `rundowns.not_found` when the team cannot see the rundown.
   */
  async build(rundownId: string, teamId: string): Promise<V0View> {
    const last = await latestEventId(this.redis, rundownId);
    const caller: CallerContext = { requestId: newRequestId(), teamId, role: 'VIEW' };
    const [rundown, status] = await Promise.all([
      this.content.rundown(rundownId, caller),
      this.content.status(rundownId, caller),
    ]);
    const running = status.phase === Phase.PHASE_RUNNING ? status.active_cue : undefined;
    const cue = (id: string | undefined) =>
      id ? this.content.cue(rundownId, id, caller).catch(() => undefined) : Promise.resolve(undefined);
    const [current, next] = await Promise.all([cue(running?.id), cue(status.phase === Phase.PHASE_ENDED ? undefined : status.next_cue?.id)]);
    const phase = status.phase === Phase.PHASE_RUNNING ? 'running' : status.phase === Phase.PHASE_ENDED ? 'ended' : 'pre-show';
    return {
      teamId,
      pos: last,
      revision: status.revision,
      rundown: v0Rundown(rundown),
      currentCue: v0Cue(current),
      nextCue: v0Cue(next),
      timesnap: timesnapOf(phase, running ? { id: running.id, started_at: running.started_at, paused_at: running.paused_at ?? null, duration_ms: running.duration_ms } : null),
    };
  }
}
