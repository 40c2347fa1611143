import { rundownTag, type RedisClient } from './redis.js';

/**
 * The rundown record read model in Redis: written by the rundown service after each commit that
 * wrote a rundown row (and filled by its reads), read by every gateway for `GET /v1/rundowns/:id`.
 * One hash per rundown: `v` the row's `record_version`, then either `t` (its team) and `m` (the
 * `rundown.rundown.v1.Rundown` message, protobuf bytes, exactly what GetRundown answers) or `d`
 * (removed). A write keeps only a newer version, so a fill or a refresh that lost a race to a later
 * commit never brings an older record back; every key expires after `RUNDOWN_RECORD_TTL_MS`, the
 * bound on how long a record can stay behind if a refresh after a commit could not reach Redis.
 */
export const rundownRecordKey = (rundownId: string): string => `rundown:record:${rundownTag(rundownId)}`;

/** How long a record (or a removal) stays without being written again. */
export const RUNDOWN_RECORD_TTL_MS = 60_000;

/** KEYS[1] the key; ARGV: version, team id ('' for a removal), message bytes, ttl ms. 1 when written. */
const WRITE_IF_NEWER = `
local current = tonumber(redis.call('HGET', KEYS[1], 'v') or '-1')
if current >= tonumber(ARGV[1]) then return 0 end
redis.call('DEL', KEYS[1])
if ARGV[2] == '' then
  redis.call('HSET', KEYS[1], 'v', ARGV[1], 'd', '1')
else
  redis.call('HSET', KEYS[1], 'v', ARGV[1], 't', ARGV[2], 'm', ARGV[3])
end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1`;

type WithRecordScript = RedisClient & {
  writeRundownRecord(key: string, version: string, team: string, message: Buffer | string, ttlMs: number): Promise<number>;
};

function withScript(redis: RedisClient): WithRecordScript {
  const r = redis as WithRecordScript;
  if (typeof r.writeRundownRecord !== 'function') redis.defineCommand('writeRundownRecord', { numberOfKeys: 1, lua: WRITE_IF_NEWER });
  return r;
}

/** One rundown's state as the rundown service last committed it. */
export type RundownRecordState = { id: string; version: number } & ({ teamId: string; message: Uint8Array } | { removed: true });

/** Writes each state whose version is newer than the stored one (one round trip for all of them). */
export async function writeRundownRecords(redis: RedisClient, states: readonly RundownRecordState[], ttlMs = RUNDOWN_RECORD_TTL_MS): Promise<void> {
  const r = withScript(redis);
  await Promise.all(
    states.map((s) =>
      'removed' in s
        ? r.writeRundownRecord(rundownRecordKey(s.id), String(s.version), '', '', ttlMs)
        : r.writeRundownRecord(rundownRecordKey(s.id), String(s.version), s.teamId, Buffer.from(s.message.buffer, s.message.byteOffset, s.message.byteLength), ttlMs),
    ),
  );
}

/** What the read model holds for a rundown: nothing (ask the rundown service), a removal, or the record of a team. */
export type StoredRundownRecord = undefined | 'removed' | { teamId: string; message: Buffer };

export async function readRundownRecord(redis: RedisClient, rundownId: string): Promise<StoredRundownRecord> {
  const [team, message, removed] = await redis.hmgetBuffer(rundownRecordKey(rundownId), 't', 'm', 'd');
  if (removed) return 'removed';
  if (!team || !message) return undefined;
  return { teamId: team.toString('utf8'), message };
}
