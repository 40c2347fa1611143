// Which services' `migrate` has anything to do. Starting a migrate process costs a whole service
// start (node, telemetry, TypeORM, the service's modules: seconds of CPU on a busy machine) even when
// it finds nothing to apply, so the launcher first asks the database: each service's migrations are
// read from its own migrations module (the list its `migrate` hands TypeORM), and the names TypeORM
// recorded in the service's schema (`<schema>.migrations`) are read over one connection. A service is
// migrated when any of its migrations is not recorded there, when the table is missing, and whenever
// the answer is in doubt (the module or the database could not be read): migrating is always correct.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { errorMessage } from './util.js';

export interface MigratingService {
  /** Its name, also its schema. */
  name: string;
  /** Its migrations module (absolute path), exporting `migrations`: the classes `<service> migrate` applies. */
  module: string;
}

export interface MigrationPlan {
  /** The services to migrate, each with why. */
  needed: { name: string; why: string }[];
  /** The services whose every migration is recorded in their schema. */
  current: string[];
}

/** A service's migrations module, beside its entry point (`dist/main.js` -> `dist/migrations/index.js`). */
export function migrationsModuleOf(entry: string): string {
  return path.join(path.dirname(entry), 'migrations', `index${path.extname(entry)}`);
}

/** The names TypeORM records for the migrations a module lists (a migration's `name`, else its class name). */
export async function definedMigrations(module: string): Promise<string[]> {
  const loaded = (await import(pathToFileURL(module).href)) as { migrations?: unknown };
  if (!Array.isArray(loaded.migrations)) throw new Error(`${module} exports no \`migrations\` list`);
  return loaded.migrations.map((migration: new () => { name?: string }) => new migration().name ?? migration.name);
}

const quoteIdent = (name: string): string => `"${name.replaceAll('"', '""')}"`;

export async function planMigrations(databaseUrl: string, services: readonly MigratingService[]): Promise<MigrationPlan> {
  if (services.length === 0) return { needed: [], current: [] };
  const defined = await Promise.all(
    services.map((service) => definedMigrations(service.module).then((names) => ({ names }), (error: unknown) => ({ error: errorMessage(error) }))),
  );
  const recorded = new Map<string, Set<string> | string>();
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5000, application_name: 'launcher' });
  client.on('error', () => undefined);
  try {
    await client.connect();
    // One round trip for which schemas have the table, one per schema that has it.
    const { rows } = await client.query<{ schema: string; present: boolean }>(
      `SELECT s AS schema, to_regclass(format('%I.migrations', s)) IS NOT NULL AS present FROM unnest($1::text[]) AS s`,
      [services.map((service) => service.name)],
    );
    for (const row of rows) {
      if (!row.present) {
        recorded.set(row.schema, 'no migrations table yet');
        continue;
      }
      const names = await client.query<{ name: string }>(`SELECT name FROM ${quoteIdent(row.schema)}.migrations`);
      recorded.set(row.schema, new Set(names.rows.map((r) => r.name)));
    }
  } catch (error) {
    for (const service of services) if (!recorded.has(service.name)) recorded.set(service.name, `the database did not say (${errorMessage(error)})`);
  } finally {
    await client.end().catch(() => undefined);
  }

  const plan: MigrationPlan = { needed: [], current: [] };
  services.forEach((service, i) => {
    const mine = defined[i]!;
    const applied = recorded.get(service.name) ?? 'the database did not say';
    if ('error' in mine) plan.needed.push({ name: service.name, why: `its migrations could not be read (${mine.error})` });
    else if (typeof applied === 'string') plan.needed.push({ name: service.name, why: applied });
    else {
      const pending = mine.names.filter((name) => !applied.has(name));
      if (pending.length > 0) plan.needed.push({ name: service.name, why: `pending: ${pending.join(', ')}` });
      else plan.current.push(service.name);
    }
  });
  return plan;
}
