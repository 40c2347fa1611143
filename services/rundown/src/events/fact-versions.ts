import { bumpFactVersions, counter, type Logger, type RundownFact, type RedisClient } from '@rundown/shared';
import type { FactVersions } from '../domain/fact-versions.js';

/** The fact versions in Redis (the shared `bumpFactVersions`), waited for at most `timeoutMs`. */
export class RedisFactVersions implements FactVersions {
  private readonly failures = counter('rundown.fact_version.write_failures', {
    description: 'Fact version writes that failed or timed out (the cells cache or the runner may keep old facts up to their max age), by fact',
  });

  constructor(
    private readonly redis: RedisClient,
    private readonly logger: Logger,
    private readonly timeoutMs: number,
  ) {}

  async changed(rundownId: string, facts: readonly RundownFact[]): Promise<void> {
    if (!facts.length) return;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        bumpFactVersions(this.redis, rundownId, facts),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${this.timeoutMs} ms`)), this.timeoutMs);
        }),
      ]);
    } catch (err) {
      for (const fact of facts) this.failures.add(1, { fact });
      this.logger.warn({ err, rundown_id: rundownId, facts }, 'fact versions not written; their keepers may keep old facts up to their max age');
    } finally {
      clearTimeout(timer);
    }
  }
}
