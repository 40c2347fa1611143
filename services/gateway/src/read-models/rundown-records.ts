import { AppError, canSee, couldSee, looksLikeId, readRundownRecord, type CallerContext, type Logger, type RedisClient, type StoredRundownRecord } from '@rundown/shared/core';
import { Rundown } from '@rundown/shared/proto/rundown/rundown/v1/rundown';

/**
 * The rundown record read model (the shared `rundown-records.ts`): `GET /v1/rundowns/:id` answered
 * from one Redis round trip instead of a call to the rundown service and its PostgreSQL read. The
 * rundown service writes each record after every commit that wrote its row, before the write
 * answers, and keeps only newer versions, so a read that starts after a write's answer sees it on
 * every gateway (nothing is kept in this process).
 *
 * Who may see a record is the one rule (`canSee`, shared/src/visibility.ts) the rundown service
 * applies too; a removed rundown is not found. Whatever is not
 * plainly one of these (no team, an id of the wrong shape, no stored record, Redis unavailable)
 * answers undefined: the caller then asks the rundown service, which applies its own rules and
 * fills the read model.
 *
 * The Redis read (`fetch`) may start before the request is authenticated (the route's `prefetch`), so
 * that it shares the round trip of the edge's own check; `get` decides what the caller sees.
 */
export class RundownRecordReader {
  constructor(
    private readonly redis: RedisClient,
    private readonly logger: Logger,
  ) {}

  /** What Redis holds for the rundown, or the error that kept it from answering; never rejects. */
  fetch(rundownId: string): Promise<StoredRundownRecord | Error> {
    return readRundownRecord(this.redis, rundownId).catch((err: unknown) => (err instanceof Error ? err : new Error(String(err))));
  }

  /** The record as `caller` may see it, from `fetched` (a `fetch` of this id) or read now; undefined: ask the rundown service. */
  async get(caller: CallerContext, rundownId: string, fetched?: Promise<StoredRundownRecord | Error>): Promise<Rundown | undefined> {
    if (!caller.teamId || !looksLikeId(rundownId)) return undefined;
    if (!couldSee(caller, rundownId)) throw new AppError('rundowns.not_found');
    const stored = await (fetched ?? this.fetch(rundownId));
    if (stored instanceof Error) {
      this.logger.warn({ err: stored.message }, 'rundown record read model unavailable; asking the rundown service');
      return undefined;
    }
    if (stored === undefined) return undefined;
    if (stored === 'removed' || !canSee(caller, { id: rundownId, teamId: stored.teamId })) throw new AppError('rundowns.not_found');
    return Rundown.decode(stored.message);
  }
}
