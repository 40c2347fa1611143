import type { Redis } from 'ioredis';
import { AppError, runnerStatusKey, type Logger, type StoredRunnerStatus } from '@rundown/shared';
import type { Principal } from '../edge/authenticator.js';

/**
 * The runner status read model (Redis, kept current by the runner after every commit): the hottest
 * read, every display polls it. One Redis GET instead of a gRPC call and a PostgreSQL read. A rundown
 * never read before (no key yet) or a Redis error answers undefined: the caller asks the runner.
 */
export class RunnerStatusReader {
  constructor(
    private readonly redis: Redis,
    private readonly logger: Logger,
  ) {}

  async get(principal: Principal, rundownId: string): Promise<StoredRunnerStatus | undefined> {
    // A rundown-scoped token sees its rundown only (as the rundown context decides for every read).
    if (principal.rundownId && principal.rundownId !== rundownId) throw new AppError('rundowns.not_found');
    let raw: string | null;
    try {
      raw = await this.redis.get(runnerStatusKey(rundownId));
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'runner status read model unavailable; asking the runner');
      return undefined;
    }
    if (raw === null) return undefined;
    const stored = JSON.parse(raw) as StoredRunnerStatus;
    if (stored.team_id !== principal.teamId) throw new AppError('rundowns.not_found');
    return stored;
  }
}
