import type { Pool, PoolClient } from 'pg';
import { DataSource, type MigrationInterface } from 'typeorm';

/**
 * What a repository reads and writes through: the pool or an open transaction (a TypeORM
 * DataSource or EntityManager satisfies it). A structural type, so the domain layers that pass
 * handles along never depend on TypeORM.
 */
export interface Db {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- rows are typed by each repository
  query(sql: string, parameters?: unknown[]): Promise<any>;
}
import type { Logger } from 'pino';

/** Runs `work` in one PostgreSQL transaction (committed when it resolves, rolled back when it throws). */
export type Transact = <T>(work: (tx: Db) => Promise<T>) => Promise<T>;

/**
 * Many values as one binary parameter, with where each lies in it: `substring($bytes FROM start FOR
 * length)` in SQL answers a value's bytes (`convert_from(..., 'UTF8')` its text), by byte offset, in
 * constant time. For long texts (or byte strings) a statement takes in bulk: a text[] parameter is
 * an array literal, every element escaped here by pg and parsed back by PostgreSQL's array_in
 * character by character, and a bytea[] one is hex both ways. Packed, long texts with quotes,
 * backslashes and non-ASCII travel in well under half the time of two text[] parameters, which is a
 * tenth of a cells:bulk's upsert.
 */
export interface PackedParameter {
  bytes: Buffer;
  /** 1-based, as SQL's `substring` counts. */
  starts: number[];
  lengths: number[];
}

/** Above this worst case, a pack measures its texts' UTF-8 length first rather than allocate it. */
const PACK_BOUND_MAX_BYTES = 4 * 1024 * 1024;

export function packParameter(values: readonly (string | Uint8Array)[]): PackedParameter {
  // A UTF-16 code unit is at most 3 bytes of UTF-8 (a surrogate pair, 2 units, is 4): one
  // allocation of that bound, each value written once. A large batch (500 cells may hold 100,000
  // characters each) is measured first instead, so it never holds three times its size.
  let size = 0;
  for (const value of values) size += typeof value === 'string' ? value.length * 3 : value.length;
  if (size > PACK_BOUND_MAX_BYTES) {
    size = 0;
    for (const value of values) size += typeof value === 'string' ? Buffer.byteLength(value) : value.length;
  }
  const bytes = Buffer.allocUnsafe(size);
  const starts = new Array<number>(values.length);
  const lengths = new Array<number>(values.length);
  let at = 0;
  values.forEach((value, i) => {
    let length = value.length;
    if (typeof value === 'string') length = bytes.write(value, at);
    else bytes.set(value, at);
    starts[i] = at + 1;
    lengths[i] = length;
    at += length;
  });
  return { bytes: bytes.subarray(0, at), starts, lengths };
}

/**
 * The pg Pool under a service's DataSource (TypeORM's PostgresDriver keeps the pool it created from
 * the DataSource's options as `master`): for the hot paths that run their statements through `pg`
 * itself, on the same connections, limits (pool size, statement_timeout) and per-statement spans.
 */
export function pgPool(db: DataSource): Pool {
  const pool = (db.driver as unknown as { master?: Pool }).master;
  if (!pool) throw new Error('pgPool: the DataSource is not initialized (no pg pool)');
  return pool;
}

/** Autocommit statements on the pool under a service's DataSource, through `pg` itself (see `pgPool`). */
export function pgDb(db: DataSource): Db {
  const pool = pgPool(db);
  return { query: async (sql: string, parameters?: unknown[]) => (await pool.query(sql, parameters)).rows };
}

/**
 * A statement PostgreSQL parses and plans once per connection rather than on every call: a named
 * (prepared) statement on the pool under `db`, for a hot read of one fixed SQL text. Each name holds
 * one prepared statement on every connection of the pool, so it is for fixed texts only, never for
 * SQL built per call. A pooler between the services and PostgreSQL must keep prepared statements.
 */
export function pgPrepared<Row>(db: DataSource, name: string, text: string): (values: unknown[]) => Promise<Row[]> {
  const pool = pgPool(db);
  return async (values) => (await pool.query({ name, text, values })).rows as Row[];
}

/**
 * Runs `work` on one pooled connection and gives it back; a connection `work` reports broken (a
 * failed ROLLBACK leaves it in an unknown state) is destroyed instead of returned to the pool.
 */
export async function withPgClient<T>(pool: Pool, work: (client: PoolClient, broken: (error: Error) => void) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let failed: Error | undefined;
  try {
    return await work(client, (error) => void (failed = error));
  } finally {
    client.release(failed);
  }
}

/**
 * Transactions on the pool under the service's DataSource, through `pg` itself: BEGIN, the work's
 * statements, COMMIT, on one pooled connection, as TypeORM's `transaction` runs them but without
 * its layer (a query runner, a broadcast before and after every statement), which profiled as a
 * share of the runner's CPU per transition (bench:runner).
 *
 * `tx.query` answers the rows, as TypeORM does for SELECT, INSERT/WITH ... RETURNING and SELECT (the
 * answer of a bare UPDATE or DELETE is not read).
 */
export function pgTransactions(db: DataSource): Transact {
  const pool = pgPool(db);
  return <T>(work: (tx: Db) => Promise<T>): Promise<T> =>
    withPgClient(pool, async (client, broken) => {
      try {
        await client.query('BEGIN');
        const result = await work({ query: async (sql: string, parameters?: unknown[]) => (await client.query(sql, parameters)).rows });
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(broken);
        throw error;
      }
    });
}

/**
 * One TypeORM DataSource per service, confined to that service's own schema. Schema changes
 * only ever come from migrations (synchronize is off).
 */
export function createDataSource(options: {
  url: string;
  schema: string;
  migrations: (new () => MigrationInterface)[];
  poolSize?: number;
  applicationName: string;
}): DataSource {
  const dataSource = new DataSource({
    type: 'postgres',
    url: options.url,
    schema: options.schema,
    entities: [],
    migrations: options.migrations,
    migrationsTableName: 'migrations',
    synchronize: false,
    migrationsRun: false,
    logging: false,
    applicationName: options.applicationName,
    extra: { max: options.poolSize ?? 10, statement_timeout: 10_000 },
  });
  const initialize = dataSource.initialize.bind(dataSource);
  dataSource.initialize = async () => {
    await initialize();
    keepCheckedOutClientsAlive(pgPool(dataSource));
    return dataSource;
  };
  return dataSource;
}

/**
 * pg's pool listens for the errors of idle clients only: a client checked out and waiting (the
 * runner opens a timed job's transaction ahead of its due instant) whose connection PostgreSQL cut
 * emitted an unhandled 'error' and took the whole process down (npm run chaos: the runner crashed at
 * every PostgreSQL restart, and the job it held stayed held). With a listener of its own on every
 * client, the error surfaces where it belongs: that client's next statement fails (a connection
 * error, answered as service_unavailable) and the client is discarded on release.
 */
function keepCheckedOutClientsAlive(pool: Pool): void {
  const guarded = new WeakSet<object>();
  const guard = (client: { on(event: 'error', listener: (err: Error) => void): unknown }) => {
    if (guarded.has(client)) return;
    guarded.add(client);
    client.on('error', () => undefined);
  };
  pool.on('connect', guard);
  pool.on('acquire', guard);
}

/**
 * Runs pending migrations under an advisory lock, so replicas starting together (or a Helm hook
 * and a developer) never apply the same migration twice.
 */
export async function runMigrations(dataSource: DataSource, schema: string): Promise<string[]> {
  if (!dataSource.isInitialized) await dataSource.initialize();
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.query('SELECT pg_advisory_lock(hashtext($1))', [`migrations:${schema}`]);
    await runner.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    return applied.map((m) => m.name);
  } finally {
    await runner.query('SELECT pg_advisory_unlock(hashtext($1))', [`migrations:${schema}`]).catch(() => undefined);
    await runner.release();
  }
}

/**
 * `<service> migrate`: applies the service's pending migrations from DATABASE_URL and exits 0
 * (a Helm hook Job, the launcher), or exits non-zero with the error.
 */
export async function migrateAndExit(schema: string, migrations: (new () => MigrationInterface)[], logger: Logger): Promise<never> {
  const url = process.env.DATABASE_URL;
  if (!url) {
    logger.fatal('DATABASE_URL is not set');
    process.exit(78);
  }
  // As PID 1 in a container a signal nobody handles is ignored: a cancelled Helm hook Job would wait
  // out its whole grace period. Stop at once; PostgreSQL rolls back the migration in progress (each
  // runs in its own transaction) and a later run starts it again.
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      logger.warn({ signal }, `${schema} migrations interrupted; the one in progress is rolled back`);
      process.exit(signal === 'SIGTERM' ? 143 : 130);
    });
  }
  const db = createDataSource({ url, schema, migrations, applicationName: `${schema}-migrate` });
  try {
    const applied = await runMigrations(db, schema);
    logger.info({ applied }, `${schema} migrations done`);
  } catch (err) {
    logger.fatal({ err }, `${schema} migrations failed`);
    process.exit(1);
  } finally {
    await db.destroy().catch(() => undefined);
  }
  process.exit(0);
}
