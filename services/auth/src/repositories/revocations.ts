import type { Redis } from 'ioredis';
import { redisKeys } from '@rundown/shared';

/**
 * Mirrors what the edge must check on every request into Redis: revoked token ids (kept until
 * the token would have expired anyway), each team's token epoch and current v0 token, and the
 * team's limits for the rate limiter. Postgres stays the source of truth; `republish` rebuilds
 * it all after Redis lost its data.
 */
export class RevocationStore {
  constructor(private readonly redis: Redis) {}

  async revoke(tokenId: string, expiresAt: number, now: number): Promise<void> {
    const ttl = Math.max(1, expiresAt - now);
    await this.redis.set(redisKeys.revoked(tokenId), '1', 'PX', ttl);
  }

  async setEpoch(teamId: string, epoch: number): Promise<void> {
    await this.redis.set(redisKeys.epoch(teamId), String(epoch));
  }

  async setV0Token(teamId: string, tokenId: string): Promise<void> {
    await this.redis.set(redisKeys.v0Token(teamId), tokenId);
  }

  async setTeamLimits(teamId: string, limits: { plan: string; rate_limit_per_minute: number; max_rundowns: number }): Promise<void> {
    await this.redis.hset(redisKeys.team(teamId), limits);
  }

  async isReady(): Promise<boolean> {
    return (await this.redis.exists(redisKeys.revocationsReady)) === 1;
  }

  async republish(
    revocations: { id: string; expires_at: number }[],
    teams: { id: string; token_epoch: number; v0_token_id: string | null; limits: Parameters<RevocationStore['setTeamLimits']>[1] }[],
    now: number,
  ): Promise<void> {
    const pipeline = this.redis.multi();
    for (const r of revocations) pipeline.set(redisKeys.revoked(r.id), '1', 'PX', Math.max(1, r.expires_at - now));
    for (const t of teams) {
      pipeline.set(redisKeys.epoch(t.id), String(t.token_epoch));
      if (t.v0_token_id) pipeline.set(redisKeys.v0Token(t.id), t.v0_token_id);
      pipeline.hset(redisKeys.team(t.id), t.limits);
    }
    pipeline.set(redisKeys.revocationsReady, String(now));
    await pipeline.exec();
  }
}
