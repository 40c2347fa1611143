import type { RedisClient, Replication } from '@rundown/shared';
import { onReplicas, redisKeys } from '@rundown/shared';

type Limits = { plan: string; rate_limit_per_minute: number; max_rundowns: number };

/**
 * Mirrors what the edge must check on every request into Redis: revoked token ids (kept until
 * the token would have expired anyway), each team's token epoch and current v0 token, and the
 * team's limits for the rate limiter, each team's under its hash tag with its own "published"
 * marker (`redisKeys.teamReady`). Postgres stays the source of truth; `republish` rebuilds it after
 * Redis lost data: all of it (no global marker), or a team's (its marker gone: a shard restarted
 * empty, or a failover lost the write that set it).
 */
export class RevocationStore {
  constructor(
    private readonly redis: RedisClient,
    /** With replicas: a revocation or a rotation is answered once a replica holds it (a failover cannot undo it). */
    private readonly replication: Replication = { replicas: 0, timeoutMs: 0 },
  ) {}

  /** One write in `key`'s slot, on a replica too when there are replicas (else it throws: the caller retries). */
  private async durable(key: string, write: (p: ReturnType<RedisClient['pipeline']>) => void): Promise<void> {
    const [[error]] = (await onReplicas(this.redis, key, this.replication, write)) as [[Error | null, unknown]];
    if (error) throw error;
  }

  async revoke(teamId: string, tokenId: string, expiresAt: number, now: number): Promise<void> {
    const ttl = Math.max(1, expiresAt - now);
    const key = redisKeys.revoked(teamId, tokenId);
    await this.durable(key, (p) => void p.set(key, '1', 'PX', ttl));
  }

  async setEpoch(teamId: string, epoch: number): Promise<void> {
    const key = redisKeys.epoch(teamId);
    await this.durable(key, (p) => void p.set(key, String(epoch)));
  }

  async setV0Token(teamId: string, tokenId: string): Promise<void> {
    await this.redis.set(redisKeys.v0Token(teamId), tokenId);
  }

  async setTeamLimits(teamId: string, limits: Limits): Promise<void> {
    await this.redis.hset(redisKeys.team(teamId), limits);
  }

  async isReady(): Promise<boolean> {
    return (await this.redis.exists(redisKeys.revocationsReady)) === 1;
  }

  /** Of these teams, those whose published state is missing (one EXISTS each, pipelined per slot by the client). */
  async missing(teamIds: string[]): Promise<string[]> {
    const present = await Promise.all(teamIds.map((id) => this.redis.exists(redisKeys.teamReady(id))));
    return teamIds.filter((_, i) => present[i] === 0);
  }

  /**
   * Publishes the teams' state: per team one MULTI in its slot (revocations, epoch, v0 token, limits,
   * then its marker); `all` also sets the global marker, last.
   */
  async republish(
    revocations: { id: string; team_id: string; expires_at: number }[],
    teams: { id: string; token_epoch: number; v0_token_id: string | null; limits: Limits }[],
    now: number,
    all = true,
  ): Promise<void> {
    const byTeam = new Map<string, { id: string; expires_at: number }[]>();
    for (const r of revocations) byTeam.set(r.team_id, [...(byTeam.get(r.team_id) ?? []), r]);
    await Promise.all(
      teams.map((t) => {
        const multi = this.redis.multi();
        for (const r of byTeam.get(t.id) ?? []) multi.set(redisKeys.revoked(t.id, r.id), '1', 'PX', Math.max(1, r.expires_at - now));
        multi.set(redisKeys.epoch(t.id), String(t.token_epoch));
        if (t.v0_token_id) multi.set(redisKeys.v0Token(t.id), t.v0_token_id);
        multi.hset(redisKeys.team(t.id), t.limits);
        multi.set(redisKeys.teamReady(t.id), String(now));
        return multi.exec();
      }),
    );
    if (all) await this.redis.set(redisKeys.revocationsReady, String(now));
  }
}
