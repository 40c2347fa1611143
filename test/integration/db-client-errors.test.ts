import { describe, expect, inject, it } from 'vitest';
import { createServiceDatabase } from '@rundown/shared';

/**
 * A connection PostgreSQL cuts while a service holds it checked out (a restart; here
 * pg_terminate_backend): pg emitted an unhandled 'error' that took the whole process down (the
 * runner, at every PostgreSQL restart of `npm run chaos`). Now that client's next statement fails,
 * and the pool goes on with fresh connections. Without the guard this file fails with an unhandled error.
 */
describe('a checked-out connection cut by PostgreSQL', () => {
  it('fails that client’s next statement, takes nothing else down, and the pool serves on', async () => {
    const db = createServiceDatabase({ url: inject('databaseUrl'), applicationName: 'it-client-errors', poolSize: 3 });
    await db.initialize();
    try {
      const pool = db.pool;
      const held = await pool.connect();
      const { pid } = (await held.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!;
      await pool.query('SELECT pg_terminate_backend($1)', [pid]);
      await new Promise((r) => setTimeout(r, 300)); // the cut reaches the idle, checked-out client
      await expect(held.query('SELECT 1')).rejects.toThrow();
      held.release(true);
      expect((await pool.query<{ one: number }>('SELECT 1 AS one')).rows[0]!.one).toBe(1);
    } finally {
      await db.destroy();
    }
  });
});
