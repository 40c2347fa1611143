import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { SERVICES } from '@rundown/shared/services';
import { definedMigrations, migrationsModuleOf, planMigrations, type MigratingService } from '../../scripts/launcher/migrations.js';
import { REPO_ROOT } from '../../scripts/launcher/util.js';
import { createDatabase } from '../support/infra.js';

/** The services that migrate, with their migrations modules (the sources, as `npm run dev` has them), and a database the tier's setup migrated for all of them. */
const services: MigratingService[] = SERVICES.filter((s) => s.migrations).map((s) => ({
  name: s.name,
  module: migrationsModuleOf(join(REPO_ROOT, 'services', s.name, 'src', 'main.ts')),
}));
const names = services.map((s) => s.name);
const migrated = inject('databaseUrl');
const scratch = mkdtempSync(join(tmpdir(), 'rundown-launcher-migrations-'));
const fresh = await createDatabase(new URL('/postgres', migrated).href, 'rundown_launcher_migrations');

afterAll(async () => {
  await fresh.drop();
  rmSync(scratch, { recursive: true, force: true });
});

async function sql(url: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

describe('which services the launcher starts to migrate', () => {
  it('none on a database whose schemas record every migration each service lists', async () => {
    for (const service of services) expect((await definedMigrations(service.module)).length).toBeGreaterThan(0);
    const plan = await planMigrations(migrated, services);
    expect(plan).toEqual({ needed: [], current: names });
  });

  it('every one on a database without their migrations tables', async () => {
    const plan = await planMigrations(fresh.url, services);
    expect(plan.current).toEqual([]);
    expect(plan.needed).toEqual(names.map((name) => ({ name, why: 'no migrations table yet' })));
  });

  it('a service whose schema lacks one of its migrations, naming it', async () => {
    // The runner's schema as it was before its latest migration: its first two recorded only.
    const [first, second, ...rest] = await definedMigrations(services.find((s) => s.name === 'runner')!.module);
    expect(rest.length).toBeGreaterThan(0);
    await sql(fresh.url, `CREATE SCHEMA runner; CREATE TABLE runner.migrations (id serial PRIMARY KEY, timestamp bigint NOT NULL, name text NOT NULL)`);
    await sql(fresh.url, `INSERT INTO runner.migrations (timestamp, name) VALUES (1, '${first}'), (2, '${second}')`);
    const runner = services.filter((s) => s.name === 'runner');
    expect((await planMigrations(fresh.url, runner)).needed).toEqual([{ name: 'runner', why: `pending: ${rest.join(', ')}` }]);

    // A migration added to a service that is otherwise up to date.
    const added = join(scratch, 'index.mjs');
    writeFileSync(added, `export const migrations = [class Extra1799999999999 { name = 'Extra1799999999999'; }];\n`);
    expect((await planMigrations(migrated, [{ name: 'auth', module: added }])).needed).toEqual([{ name: 'auth', why: 'pending: Extra1799999999999' }]);
  });

  it('every one when in doubt: a migrations module it cannot read, a database that does not answer', async () => {
    const unreadable = await planMigrations(migrated, [{ name: 'auth', module: join(scratch, 'missing.mjs') }]);
    expect(unreadable.needed.map((n) => n.name)).toEqual(['auth']);
    expect(unreadable.needed[0]!.why).toMatch(/could not be read/);

    const closed = new URL(migrated);
    closed.port = '1'; // nothing listens there
    const silent = await planMigrations(closed.href, services);
    expect(silent.current).toEqual([]);
    expect(silent.needed.map((n) => n.name)).toEqual(names);
    for (const n of silent.needed) expect(n.why).toMatch(/the database did not say/);
  });
});
