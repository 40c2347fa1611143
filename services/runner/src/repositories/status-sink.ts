import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { StatusSink } from '../domain/runner.js';
import type { Status } from '../domain/show.js';

/** Redis keys and channel of the status read model (the gateway reads them; one definition). */
export const statusKey = (rundownId: string): string => `runner:status:${rundownId}`;
export const STATUS_CHANNEL = 'runner:status';

/** What the read model holds per rundown: the status without its clock, and whose it is. */
export interface StoredStatus extends Omit<Status, 'server_time'> {
  team_id: string;
  /** When the runner committed it (ms). */
  at: number;
  removed?: true;
}

// Newer revisions only: two replicas committing back to back may publish out of order.
const WRITE_IF_NEWER = `
local current = redis.call('GET', KEYS[1])
if current then
  local ok, stored = pcall(cjson.decode, current)
  if ok and tonumber(stored.revision) > tonumber(ARGV[2]) then return 0 end
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('PUBLISH', ARGV[3], ARGV[1])
return 1`;

/**
 * After every commit, the status goes to Redis (the read model every gateway serves status and
 * countdown from) and out on a channel (gateways keep a hot copy; a late subscriber reads the key).
 * A lost write is repaired by the next change or by a cold read through the runner.
 */
export class RedisStatusSink implements StatusSink {
  private readonly redis: Redis;

  constructor(redisUrl: string, private readonly logger: Logger) {
    this.redis = new Redis(redisUrl, { maxRetriesPerRequest: 2, enableAutoPipelining: true });
    this.redis.on('error', (err: Error) => logger.warn({ err: err.message }, 'redis connection error (status)'));
    this.redis.defineCommand('writeStatusIfNewer', { numberOfKeys: 1, lua: WRITE_IF_NEWER });
  }

  changed(status: Status, teamId: string): void {
    const { server_time: at, ...rest } = status;
    const stored: StoredStatus = { ...rest, team_id: teamId, at };
    const write = (this.redis as unknown as { writeStatusIfNewer(key: string, json: string, rev: number, channel: string): Promise<number> })
      .writeStatusIfNewer(statusKey(status.rundown_id), JSON.stringify(stored), status.revision, STATUS_CHANNEL);
    write.catch((err: Error) => this.logger.warn({ err: err.message, rundown_id: status.rundown_id }, 'status read model write failed'));
  }

  removed(rundownId: string): void {
    this.redis
      .multi()
      .del(statusKey(rundownId))
      .publish(STATUS_CHANNEL, JSON.stringify({ rundown_id: rundownId, removed: true, revision: Number.MAX_SAFE_INTEGER }))
      .exec()
      .catch((err: Error) => this.logger.warn({ err: err.message, rundown_id: rundownId }, 'status read model removal failed'));
  }

  close(): void {
    this.redis.disconnect();
  }
}
