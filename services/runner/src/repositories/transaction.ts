import type { Db } from '@rundown/shared';
import type { Pool } from 'pg';
import type { DataSource } from 'typeorm';

/** Runs `work` in one PostgreSQL transaction (committed when it resolves, rolled back when it throws). */
export type Transact = <T>(work: (tx: Db) => Promise<T>) => Promise<T>;

/**
 * Transactions on the pool under the service's DataSource, through `pg` itself: BEGIN, the work's
 * statements, COMMIT, on one pooled connection, as TypeORM's `transaction` runs them but without
 * its layer (a query runner, a broadcast before and after every statement), which profiled as a
 * share of the runner's CPU per transition (bench:runner). Same pool, so the same limits
 * (DB_POOL_SIZE, statement_timeout) and the same spans per statement.
 *
 * `tx.query` answers the rows, as TypeORM does for the statements the runner runs (a SELECT, an
 * INSERT or data-modifying WITH ... RETURNING or SELECT; the answer of a bare UPDATE or DELETE is not read).
 */
export function pgTransactions(db: DataSource): Transact {
  // TypeORM's PostgresDriver keeps the pg Pool it created from the DataSource's options as `master`.
  const pool = (db.driver as unknown as { master?: Pool }).master;
  if (!pool) throw new Error('pgTransactions: the DataSource is not initialized (no pg pool)');
  return async <T>(work: (tx: Db) => Promise<T>): Promise<T> => {
    const client = await pool.connect();
    // A connection whose ROLLBACK failed is in an unknown state: destroyed, not returned to the pool.
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const result = await work({ query: async (sql: string, parameters?: unknown[]) => (await client.query(sql, parameters)).rows });
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch((rollbackError: Error) => void (broken = rollbackError));
      throw error;
    } finally {
      client.release(broken);
    }
  };
}
