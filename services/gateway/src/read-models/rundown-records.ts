import type { Redis } from 'ioredis';
import { AppError, looksLikeId, readRundownRecord, type CallerContext, type Logger } from '@rundown/shared';
import { Rundown } from '@rundown/shared/proto/rundown/rundown/v1/rundown';

/**
 * The rundown record read model (the shared `rundown-records.ts`): `GET /v1/rundowns/:id` answered
 * from one Redis round trip instead of a call to the rundown service and its PostgreSQL read. The
 * rundown service writes each record after every commit that wrote its row, before the write
 * answers, and keeps only newer versions, so a read that starts after a write's answer sees it on
 * every gateway (nothing is kept in this process).
 *
 * Who may see a record is decided as the rundown service decides it: a caller of the record's team,
 * a rundown-scoped token for its own rundown only; a removed rundown is not found. Whatever is not
 * plainly one of these (no team, an id of the wrong shape, no stored record, Redis unavailable)
 * answers undefined: the caller then asks the rundown service, which applies its own rules and
 * fills the read model.
 */
export class RundownRecordReader {
  constructor(
    private readonly redis: Redis,
    private readonly logger: Logger,
  ) {}

  async get(caller: CallerContext, rundownId: string): Promise<Rundown | undefined> {
    if (!caller.teamId || !looksLikeId(rundownId)) return undefined;
    if (caller.tokenRundownId && caller.tokenRundownId !== rundownId) throw new AppError('rundowns.not_found');
    let stored;
    try {
      stored = await readRundownRecord(this.redis, rundownId);
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'rundown record read model unavailable; asking the rundown service');
      return undefined;
    }
    if (stored === undefined) return undefined;
    if (stored === 'removed' || stored.teamId !== caller.teamId) throw new AppError('rundowns.not_found');
    return Rundown.decode(stored.message);
  }
}
