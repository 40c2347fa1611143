import { createHash } from 'node:crypto';
import { onReplicas, randomToken, type RedisClient, type Replication } from '@rundown/shared/core';

/**
 * The id a create takes when its request carries an Idempotency-Key (routes get it as
 * `HandlerInput.keyedId`): the same team, scope (the request's path) and key always name the same resource, so a retry whose first attempt was
 * applied but never answered (the service stopped after its commit, a deadline passed: the claim
 * was released with the 503) finds what that attempt made instead of making it twice.
 * `undefined` without a key: the service draws a fresh id.
 */
export function idempotentId(prefix: string, teamId: string, scope: string, key: string | string[] | undefined): string | undefined {
  if (typeof key !== 'string') return undefined;
  return `${prefix}_${createHash('sha256').update(`${teamId}\n${scope}\n${key}`).digest('base64url').slice(0, 16)}`;
}

/** A completed answer as it is replayed. */
export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

interface InFlightRecord {
  v: 1;
  state: 'in_flight';
  fp: string;
  owner: string;
}

interface DoneRecord extends StoredResponse {
  v: 1;
  state: 'done';
  fp: string;
}

export type Claim =
  | { outcome: 'acquired'; owner: string }
  | { outcome: 'in_flight'; fingerprint: string }
  | { outcome: 'done'; fingerprint: string; response: StoredResponse }
  | { outcome: 'corrupt' };

/** How long a completed answer is kept (docs/api-decisions.md#idempotency). */
export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;
/** How long a claim outlives a process that died mid-request (every call has a 5 s gRPC deadline). */
export const IDEMPOTENCY_LOCK_MS = 30_000;

// SET NX the in-flight claim, or return what is already there: one atomic step.
const CLAIM = `
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return false end
return redis.call('GET', KEYS[1])`;

// Replace the claim with the answer (or drop it), only if the claim is still ours.
const SETTLE = `
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
local ok, record = pcall(cjson.decode, current)
if not ok or type(record) ~= 'table' or record.owner ~= ARGV[1] then return 0 end
if ARGV[2] == '' then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) end
return 1`;

type IdempotencyRedis = RedisClient & {
  idemClaim(key: string, record: string, ttl: number): Promise<string | null>;
  idemSettle(key: string, owner: string, record: string, ttl: number): Promise<number>;
};

/** JSON with object keys sorted at every depth, so `{a,b}` and `{b,a}` are the same body. */
export function canonicalJson(value: unknown): string {
  if (value === undefined) return '';
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

/**
 * What makes two requests "the same" under one key: method, path and canonical body (or, for a
 * body that is not JSON, its exact text).
 */
export function fingerprint(method: string, path: string, body: unknown, unparsed?: string): string {
  const content = unparsed === undefined ? `json:${canonicalJson(body)}` : `raw:${unparsed}`;
  return createHash('sha256').update(`${method.toUpperCase()}\n${path}\n${content}`).digest('hex');
}

function decode(raw: string): InFlightRecord | DoneRecord | undefined {
  let record: unknown;
  try {
    record = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (!record || typeof record !== 'object') return undefined;
  const r = record as { v?: unknown; fp?: unknown; state?: unknown; owner?: unknown; status?: unknown; body?: unknown; headers?: unknown };
  if (r.v !== 1 || typeof r.fp !== 'string') return undefined;
  if (r.state === 'in_flight' && typeof r.owner === 'string') return r as unknown as InFlightRecord;
  if (
    r.state === 'done' &&
    Number.isInteger(r.status) &&
    typeof r.body === 'string' &&
    r.headers &&
    typeof r.headers === 'object' &&
    Object.values(r.headers).every((h) => typeof h === 'string')
  ) {
    return r as unknown as DoneRecord;
  }
  return undefined;
}

/**
 * Idempotency records in Redis, shared by every gateway replica, keyed by (team, key). A request
 * claims the key with `SET NX PX` (the claim expires if its process dies), runs, then replaces the
 * claim with its answer for 24 h, or drops it when the answer must not be cached (5xx).
 *
 * With replicas (`replication`, Sentinel or a cluster): a claim counts only once a replica holds it
 * (`WAIT`, when one is connected), else the request is not run (503, retried with the same key), and
 * the answer is sent once its record reached a replica or the wait timed out (logged): a failover
 * then cannot forget a key whose request ran, except a record whose wait timed out
 * (docs/scale-out.md#redis-failover).
 */
export class IdempotencyStore {
  private readonly redis: IdempotencyRedis;

  constructor(
    redis: RedisClient,
    private readonly prefix = 'idem:v1',
    private readonly replication: Replication = { replicas: 0, timeoutMs: 0 },
  ) {
    if (typeof (redis as unknown as Partial<IdempotencyRedis>).idemClaim !== 'function') {
      redis.defineCommand('idemClaim', { numberOfKeys: 1, lua: CLAIM });
      redis.defineCommand('idemSettle', { numberOfKeys: 1, lua: SETTLE });
    }
    this.redis = redis as IdempotencyRedis;
  }

  /** The Redis key: the client's key is hashed, so any 256 characters make a safe key. */
  keyOf(teamId: string, key: string): string {
    return `${this.prefix}:${teamId}:${createHash('sha256').update(key).digest('hex')}`;
  }

  async claim(redisKey: string, fp: string): Promise<Claim> {
    const owner = randomToken();
    const record: InFlightRecord = { v: 1, state: 'in_flight', fp, owner };
    const existing = await this.replicated<string | null>(redisKey, (p) => p.idemClaim(redisKey, JSON.stringify(record), IDEMPOTENCY_LOCK_MS)).catch(async (error: unknown) => {
      // Not on a replica in time: the request does not run; the claim goes (best effort).
      if (this.replication.replicas > 0) await this.release(redisKey, owner).catch(() => undefined);
      throw error;
    });
    if (existing === null) return { outcome: 'acquired', owner };
    const decoded = decode(existing);
    if (!decoded) return { outcome: 'corrupt' };
    if (decoded.state === 'in_flight') return { outcome: 'in_flight', fingerprint: decoded.fp };
    return { outcome: 'done', fingerprint: decoded.fp, response: { status: decoded.status, headers: decoded.headers, body: decoded.body } };
  }

  async complete(redisKey: string, owner: string, fp: string, response: StoredResponse): Promise<void> {
    const record: DoneRecord = { v: 1, state: 'done', fp, ...response };
    await this.replicated(redisKey, (p) => p.idemSettle(redisKey, owner, JSON.stringify(record), IDEMPOTENCY_TTL_MS));
  }

  /** One script call, then (with replicas) until a replica holds it; its reply. */
  private async replicated<T>(redisKey: string, call: (target: IdempotencyRedis) => Promise<T> | unknown): Promise<T> {
    if (this.replication.replicas === 0) return (await call(this.redis)) as T;
    const [[error, reply]] = (await onReplicas(this.redis, redisKey, this.replication, (p) => void call(p as unknown as IdempotencyRedis))) as [[Error | null, T]];
    if (error) throw error;
    return reply;
  }

  async release(redisKey: string, owner: string): Promise<void> {
    await this.redis.idemSettle(redisKey, owner, '', 0);
  }
}
