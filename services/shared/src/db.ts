import pg, { type Pool, type PoolClient } from 'pg';
import type { MigrationInterface } from 'typeorm';

/**
 * What a repository reads and writes through: the service's `Database` or an open transaction; its
 * `query` answers the rows. A structural type, so the domain layers that pass handles along depend
 * on no driver.
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

/** PostgreSQL's isolation levels above the default (READ COMMITTED). */
export type IsolationLevel = 'REPEATABLE READ' | 'SERIALIZABLE';

/**
 * A service's PostgreSQL: one `pg` pool, statements and transactions straight through `pg` (its
 * OpenTelemetry instrumentation makes a span per statement). `query` answers the rows, for every
 * kind of statement (a count comes back as a row: `WITH d AS (DELETE ... RETURNING 1) SELECT count(*)`).
 */
export interface Database extends Db {
  readonly pool: Pool;
  /** Opens one connection, so a start-up fails at once when PostgreSQL cannot be reached. */
  initialize(): Promise<Database>;
  destroy(): Promise<void>;
  /** Runs `work` in one transaction on one pooled connection: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: Db) => Promise<T>): Promise<T>;
  transaction<T>(isolation: IsolationLevel, work: (tx: Db) => Promise<T>): Promise<T>;
}

/**
 * A named (prepared) statement: PostgreSQL parses and plans it once per connection rather than on
 * every call, for a hot read of one fixed SQL text. Each name holds one prepared statement on every
 * connection of the pool, so it is for fixed texts only, never for SQL built per call. A pooler
 * between the services and PostgreSQL must keep prepared statements.
 */
export function pgPrepared<Row>(db: Database, name: string, text: string): (values: unknown[]) => Promise<Row[]> {
  return async (values) => (await db.pool.query({ name, text, values })).rows as Row[];
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
 * A service's database, confined by convention to that service's own schema (every statement names
 * it). Schema changes only ever come from migrations (`runMigrations`), which are the one use of
 * TypeORM: it is loaded for them alone, never on a service's start or its requests.
 */
export function createServiceDatabase(options: { url: string; poolSize?: number; applicationName: string }): Database {
  const pool = new pg.Pool({
    connectionString: options.url,
    application_name: options.applicationName,
    max: options.poolSize ?? 10,
    statement_timeout: 10_000,
  });
  // An idle client whose connection drops: the pool discards it and the next statement connects anew.
  pool.on('error', () => undefined);
  keepCheckedOutClientsAlive(pool);
  const transaction = <T>(isolationOrWork: IsolationLevel | ((tx: Db) => Promise<T>), maybeWork?: (tx: Db) => Promise<T>): Promise<T> => {
    const [isolation, work] = typeof isolationOrWork === 'function' ? [undefined, isolationOrWork] : [isolationOrWork, maybeWork!];
    return withPgClient(pool, async (client, broken) => {
      try {
        await client.query(isolation ? `BEGIN ISOLATION LEVEL ${isolation}` : 'BEGIN');
        const result = await work({ query: async (sql: string, parameters?: unknown[]) => (await client.query(sql, parameters)).rows });
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(broken);
        throw error;
      }
    });
  };
  const database: Database = {
    pool,
    query: async (sql: string, parameters?: unknown[]) => (await pool.query(sql, parameters)).rows,
    transaction: transaction as Database['transaction'],
    async initialize() {
      await pool.query('SELECT 1');
      return database;
    },
    destroy: () => pool.end(),
  };
  return database;
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
 * and a developer) never apply the same migration twice. TypeORM runs them (its migrations table
 * and runner), loaded here only: a service's start and requests never load it.
 */
export async function runMigrations(options: { url: string; schema: string; migrations: (new () => MigrationInterface)[]; applicationName: string }): Promise<string[]> {
  const { DataSource } = await import('typeorm');
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
    // Two connections: the advisory lock's and the migrations'. No statement timeout: a migration is not cut short.
    extra: { max: 2, statement_timeout: 0 },
  });
  await dataSource.initialize();
  const runner = dataSource.createQueryRunner();
  try {
    await runner.connect();
    const lock = `migrations:${options.schema}`;
    await runner.query('SELECT pg_advisory_lock(hashtext($1))', [lock]);
    try {
      await runner.query(`CREATE SCHEMA IF NOT EXISTS "${options.schema}"`);
      const applied = await dataSource.runMigrations({ transaction: 'each' });
      return applied.map((m) => m.name);
    } finally {
      await runner.query('SELECT pg_advisory_unlock(hashtext($1))', [lock]).catch(() => undefined);
    }
  } finally {
    await runner.release();
    await dataSource.destroy().catch(() => undefined);
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
  try {
    const applied = await runMigrations({ url, schema, migrations, applicationName: `${schema}-migrate` });
    logger.info({ applied }, `${schema} migrations done`);
  } catch (err) {
    logger.fatal({ err }, `${schema} migrations failed`);
    process.exit(1);
  }
  process.exit(0);
}
