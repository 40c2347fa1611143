import type { Database, Db } from '@rundown/shared';
import type { RecordReadModel } from '../domain/record-read-model.js';
import type { Transactions } from '../domain/transactions.js';

/** Transactions over the service's PostgreSQL pool. */
export class PgTransactions implements Transactions {
  constructor(
    private readonly database: Database,
    private readonly records?: RecordReadModel,
  ) {}

  get db(): Db {
    return this.database;
  }

  /**
   * One write transaction. With a record read model, the rundown rows the transaction wrote (the
   * RecordVersion migration's triggers list them) are read before the commit and handed to it after,
   * before the write answers.
   */
  async run<T>(work: (tx: Db) => Promise<T>): Promise<T> {
    if (!this.records) return this.database.transaction(work);
    let written: string[] = [];
    const result = await this.database.transaction(async (tx) => {
      const done = await work(tx);
      const [row] = (await tx.query("SELECT current_setting('rundown.written_records', true) AS ids")) as { ids: string | null }[];
      if (row?.ids) written = [...new Set(row.ids.split(' ').filter(Boolean))];
      return done;
    });
    if (written.length > 0) await this.records.written(written);
    return result;
  }

  /** Reads that must agree with each other (the order on the rundown row and the cue rows) share one snapshot. */
  snapshot<T>(work: (tx: Db) => Promise<T>): Promise<T> {
    return this.database.transaction('REPEATABLE READ', work);
  }
}
