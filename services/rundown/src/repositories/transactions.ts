import type { Db } from '@rundown/shared';
import type { DataSource } from 'typeorm';
import type { Transactions } from '../domain/transactions.js';

/** Transactions over the service's PostgreSQL pool. */
export class PgTransactions implements Transactions {
  constructor(private readonly dataSource: DataSource) {}

  get db(): Db {
    return this.dataSource;
  }

  run<T>(work: (tx: Db) => Promise<T>): Promise<T> {
    return this.dataSource.transaction((tx) => work(tx));
  }

  /** Reads that must agree with each other (the order on the rundown row and the cue rows) share one snapshot. */
  snapshot<T>(work: (tx: Db) => Promise<T>): Promise<T> {
    return this.dataSource.transaction('REPEATABLE READ', (tx) => work(tx));
  }
}
