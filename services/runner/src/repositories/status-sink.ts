import type { Logger } from 'pino';
import { createRedis, RUNNER_STATUS_CHANNEL as STATUS_CHANNEL, runnerStatusKey as statusKey, type RedisClient, type RedisSettings, type StoredRunnerStatus } from '@rundown/shared';
import type { StatusSink } from '../domain/runner.js';
import type { Status } from '../domain/show.js';

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
  private readonly redis: RedisClient;

  constructor(settings: RedisSettings, private readonly logger: Logger) {
    this.redis = createRedis(settings, { name: 'runner-status', maxRetriesPerRequest: 2, enableAutoPipelining: true, commandTimeout: 2_000 });
    this.redis.on('error', (err: Error) => logger.warn({ err: err.message }, 'redis connection error (status)'));
    this.redis.defineCommand('writeStatusIfNewer', { numberOfKeys: 1, lua: WRITE_IF_NEWER });
  }

  /** Never fails the change it follows (already committed): a failed write is logged; the key then expires or is rewritten. */
  async changed(status: Status, teamId: string): Promise<void> {
    const { server_time: at, ...rest } = status;
    const stored: StoredRunnerStatus = { ...rest, team_id: teamId, at };
    try {
      await (this.redis as unknown as { writeStatusIfNewer(key: string, json: string, rev: number, channel: string): Promise<number> }).writeStatusIfNewer(
        statusKey(status.rundown_id),
        JSON.stringify(stored),
        status.revision,
        STATUS_CHANNEL,
      );
    } catch (err) {
      this.logger.warn({ err: (err as Error).message, rundown_id: status.rundown_id }, 'status read model write failed');
    }
  }

  async removed(rundownId: string): Promise<void> {
    try {
      await this.redis
        .multi()
        .del(statusKey(rundownId))
        .publish(STATUS_CHANNEL, JSON.stringify({ rundown_id: rundownId, removed: true, revision: Number.MAX_SAFE_INTEGER }))
        .exec();
    } catch (err) {
      this.logger.warn({ err: (err as Error).message, rundown_id: rundownId }, 'status read model removal failed');
    }
  }

  close(): void {
    this.redis.disconnect();
  }
}
