import type { Redis } from 'ioredis';
import { bumpLayoutVersion, counter, type Logger } from '@rundown/shared';
import type { LayoutVersions } from '../domain/layout-versions.js';

/** The layout version in Redis (the shared `bumpLayoutVersion`), waited for at most `timeoutMs`. */
export class RedisLayoutVersions implements LayoutVersions {
  private readonly failures = counter('rundown.layout_version.write_failures', {
    description: 'Layout version writes that failed or timed out (the cells cache may keep old facts up to its max age)',
  });

  constructor(
    private readonly redis: Redis,
    private readonly logger: Logger,
    private readonly timeoutMs: number,
  ) {}

  async changed(rundownId: string): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        bumpLayoutVersion(this.redis, rundownId),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${this.timeoutMs} ms`)), this.timeoutMs);
        }),
      ]);
    } catch (err) {
      this.failures.add(1);
      this.logger.warn({ err, rundown_id: rundownId }, 'layout version not written; the cells cache may keep old facts up to its max age');
    } finally {
      clearTimeout(timer);
    }
  }
}
