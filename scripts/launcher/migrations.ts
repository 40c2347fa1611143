// Which services' `migrate` can be skipped: a start on a machine that already ran them would spend a
// whole process start per service (node, telemetry, the service's modules: most of a start's CPU)
// on finding nothing to apply.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { newestMtime } from './build.js';
import { REPO_ROOT, writeFileAtomic } from './util.js';

/** In DATA_DIR: per service, what its last successful `migrate` ran against and left applied. */
const STAMP = 'migrated.json';

interface Migrated {
  /** Which database (a hash of its URL). */
  database: string;
  /** The newest modification time of the service's and the shared library's sources then. */
  sources: number;
  /** The migrations its schema's table (TypeORM's `migrations`) held right after. */
  names: string[];
}

const databaseOf = (url: string): string => createHash('sha256').update(url).digest('hex');
/** Migrations are defined in the service's sources and the shared library's (the outbox's). */
const sourcesOf = (service: string): number =>
  Math.max(newestMtime(path.join(REPO_ROOT, 'services', service, 'src')), newestMtime(path.join(REPO_ROOT, 'services', 'shared', 'src')));

async function readStamp(dataDir: string): Promise<Record<string, Migrated>> {
  try {
    const parsed: unknown = JSON.parse(await readFile(path.join(dataDir, STAMP), 'utf8'));
    return parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, Migrated>) : {};
  } catch {
    return {};
  }
}

/** The names TypeORM recorded in `<schema>.migrations`; undefined when there is no such table or no answer. */
async function appliedNames(databaseUrl: string, schema: string): Promise<string[] | undefined> {
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 3000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const { rows } = await client.query<{ name: string }>(`SELECT name FROM "${schema.replaceAll('"', '""')}".migrations`);
    return rows.map((row) => row.name);
  } catch {
    return undefined;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Which of `services` need their `migrate`: all but those whose last `migrate` ran against this
 * database with the sources as they are now (no migration added or changed since), and whose
 * schema still records everything that left applied. Anything else (another database, an edited
 * source, a dropped schema, no stamp) keeps the service in the list: migrating is always correct.
 * `record` then notes the ones that migrated successfully, with the sources read here, before they ran.
 */
export async function planMigrations(
  dataDir: string,
  services: readonly string[],
  databaseUrl: string,
): Promise<{ needed: string[]; record: (migrated: readonly string[]) => Promise<void> }> {
  const stamp = await readStamp(dataDir);
  const database = databaseOf(databaseUrl);
  const sources = new Map(services.map((service) => [service, sourcesOf(service)]));
  const current = await Promise.all(
    services.map(async (service) => {
      const last = stamp[service];
      if (last === undefined || last.database !== database || last.sources !== sources.get(service) || !Array.isArray(last.names)) return false;
      const applied = await appliedNames(databaseUrl, service);
      return applied !== undefined && last.names.every((name) => applied.includes(name));
    }),
  );
  const record = async (migrated: readonly string[]) => {
    if (migrated.length === 0) return;
    for (const service of migrated) {
      const names = await appliedNames(databaseUrl, service);
      if (names !== undefined) stamp[service] = { database, sources: sources.get(service)!, names };
    }
    await writeFileAtomic(path.join(dataDir, STAMP), `${JSON.stringify(stamp, null, 2)}\n`);
  };
  return { needed: services.filter((_, i) => !current[i]), record };
}
