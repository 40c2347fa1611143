import { counter, writeRundownRecords, type Db, type Logger, type RedisClient, type RundownRecordState } from '@rundown/shared';
import { Rundown } from '@rundown/shared/proto/rundown/rundown/v1/rundown';
import { toRecord, type RundownRow } from '../domain/model.js';
import type { RecordReadModel } from '../domain/record-read-model.js';
import { rundownMessage } from '../grpc/messages.js';
import type { RundownsRepository } from '../repositories/rundowns.js';

/** A row as the read model stores it: the GetRundown answer's bytes, or a removal. */
function stateOf(row: RundownRow & { removed?: boolean }): RundownRecordState {
  if (row.removed) return { id: row.id, version: row.record_version, removed: true };
  return { id: row.id, version: row.record_version, teamId: row.team_id, message: Rundown.encode(rundownMessage(toRecord(row))).finish() };
}

/** The record read model in Redis (the shared `rundown-records.ts`); a refresh waits at most `timeoutMs`. */
export class RedisRecordReadModel implements RecordReadModel {
  private readonly failures = counter('rundown.record_read_model.write_failures', {
    description: 'Record read model writes that failed or timed out (the record may stay behind until its key expires)',
  });

  constructor(
    private readonly db: Db,
    private readonly repo: RundownsRepository,
    private readonly redis: RedisClient,
    private readonly logger: Logger,
    private readonly timeoutMs: number,
  ) {}

  async written(rundownIds: readonly string[]): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        (async () => writeRundownRecords(this.redis, (await this.repo.records(this.db, rundownIds)).map(stateOf)))(),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${this.timeoutMs} ms`)), this.timeoutMs);
        }),
      ]);
    } catch (err) {
      this.failed(err, rundownIds);
    } finally {
      clearTimeout(timer);
    }
  }

  read(row: RundownRow): void {
    writeRundownRecords(this.redis, [stateOf(row)]).catch((err: unknown) => this.failed(err, [row.id]));
  }

  private failed(err: unknown, rundownIds: readonly string[]): void {
    this.failures.add(1);
    this.logger.warn({ err, rundown_ids: rundownIds }, 'record read model not written; a gateway may serve the previous record until its key expires');
  }
}
