import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createServiceDatabase, type Database } from '@rundown/shared';

/**
 * A service's database (`createServiceDatabase`, services/shared/src/db.ts) on real PostgreSQL: what
 * every repository relies on. `query` answers rows whatever the statement; a transaction commits when
 * its work resolves, rolls back when it throws, and runs at the isolation level asked for.
 */
const schema = `it_db_${randomBytes(3).toString('hex')}`;
let db: Database;

beforeAll(async () => {
  db = await createServiceDatabase({ url: inject('databaseUrl'), applicationName: 'it-database', poolSize: 3 }).initialize();
  await db.query(`CREATE SCHEMA "${schema}"`);
  await db.query(`CREATE TABLE "${schema}".items (id text PRIMARY KEY, n int NOT NULL)`);
});

afterAll(async () => {
  await db?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await db?.destroy();
});

describe('a service database', () => {
  it('answers the rows of every kind of statement (an UPDATE or DELETE too, never [rows, count])', async () => {
    expect(await db.query(`INSERT INTO "${schema}".items VALUES ('a', 1), ('b', 2) RETURNING id`)).toEqual([{ id: 'a' }, { id: 'b' }]);
    expect(await db.query(`UPDATE "${schema}".items SET n = n + 10 WHERE id = 'a' RETURNING id, n`)).toEqual([{ id: 'a', n: 11 }]);
    expect(await db.query(`UPDATE "${schema}".items SET n = 0 WHERE id = 'none'`)).toEqual([]);
    expect(await db.query(`WITH gone AS (DELETE FROM "${schema}".items WHERE id = 'b' RETURNING 1) SELECT count(*)::int AS n FROM gone`)).toEqual([{ n: 1 }]);
    expect(await db.query(`SELECT id, n FROM "${schema}".items ORDER BY id`)).toEqual([{ id: 'a', n: 11 }]);
  });

  it('commits a transaction whose work resolves and rolls back one whose work throws, on one connection', async () => {
    const pids = await db.transaction(async (tx) => {
      await tx.query(`INSERT INTO "${schema}".items VALUES ('c', 3)`);
      const [first] = (await tx.query('SELECT pg_backend_pid() AS pid')) as { pid: number }[];
      const [second] = (await tx.query('SELECT pg_backend_pid() AS pid')) as { pid: number }[];
      return [first!.pid, second!.pid];
    });
    expect(pids[0]).toBe(pids[1]);
    await expect(
      db.transaction(async (tx) => {
        await tx.query(`INSERT INTO "${schema}".items VALUES ('d', 4)`);
        throw new Error('the work failed');
      }),
    ).rejects.toThrow('the work failed');
    expect(await db.query(`SELECT id FROM "${schema}".items WHERE id IN ('c', 'd') ORDER BY id`)).toEqual([{ id: 'c' }]);
  });

  it('runs a transaction at the isolation level asked for, READ COMMITTED otherwise', async () => {
    const level = (tx: { query(sql: string): Promise<{ level: string }[]> }) => tx.query('SELECT current_setting($$transaction_isolation$$) AS level');
    expect(await db.transaction(level)).toEqual([{ level: 'read committed' }]);
    expect(await db.transaction('REPEATABLE READ', level)).toEqual([{ level: 'repeatable read' }]);
    // A snapshot: a row committed by another connection meanwhile is not seen inside it.
    const seen = await db.transaction('REPEATABLE READ', async (tx) => {
      const before = (await tx.query(`SELECT count(*)::int AS n FROM "${schema}".items`)) as { n: number }[];
      await db.query(`INSERT INTO "${schema}".items VALUES ('e', 5)`);
      const after = (await tx.query(`SELECT count(*)::int AS n FROM "${schema}".items`)) as { n: number }[];
      return [before[0]!.n, after[0]!.n];
    });
    expect(seen[0]).toBe(seen[1]);
  });
});
