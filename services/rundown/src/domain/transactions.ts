import type { Db } from '@rundown/shared';

/**
 * How the domain opens a unit of work: `run` a write in one transaction, read a consistent
 * `snapshot`, or read through `db` (the pool). Repositories take the handle per call.
 */
export interface Transactions {
  readonly db: Db;
  run<T>(work: (tx: Db) => Promise<T>): Promise<T>;
  snapshot<T>(work: (tx: Db) => Promise<T>): Promise<T>;
}
