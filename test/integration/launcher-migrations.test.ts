import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { SERVICES } from '@rundown/shared';
import { planMigrations } from '../../scripts/launcher/migrations.js';
import { createDatabase } from '../support/infra.js';

/** The services that migrate, and a database the tier's setup migrated for all of them. */
const services = SERVICES.filter((s) => s.migrations).map((s) => s.name);
const migrated = inject('databaseUrl');
const dataDir = mkdtempSync(join(tmpdir(), 'rundown-launcher-migrations-'));
const stampFile = join(dataDir, 'migrated.json');
const editStamp = (edit: (stamp: Record<string, { database: string; sources: number; names: string[] }>) => void) => {
  const stamp = JSON.parse(readFileSync(stampFile, 'utf8')) as Parameters<typeof edit>[0];
  edit(stamp);
  writeFileSync(stampFile, JSON.stringify(stamp));
};
const fresh = await createDatabase(new URL('/postgres', migrated).href, 'rundown_launcher_migrations');

afterAll(async () => {
  await fresh.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('which services the launcher starts to migrate', () => {
  it('all of them until a migrate was recorded; none once recorded, on the same database with the same sources', async () => {
    const first = await planMigrations(dataDir, services, migrated);
    expect(first.needed).toEqual(services);
    await first.record(services);
    expect((await planMigrations(dataDir, services, migrated)).needed).toEqual([]);
  });

  it('migrates again for another database, a changed source, or a migration the schema no longer records', async () => {
    expect((await planMigrations(dataDir, services, fresh.url)).needed).toEqual(services);
    editStamp((stamp) => void (stamp.cells!.sources -= 1));
    expect((await planMigrations(dataDir, services, migrated)).needed).toEqual(['cells']);
    await (await planMigrations(dataDir, ['cells'], migrated)).record(['cells']);
    editStamp((stamp) => void stamp.auth!.names.push('Dropped1700000000000'));
    expect((await planMigrations(dataDir, services, migrated)).needed).toEqual(['auth']);
  });

  it('records nothing for a schema without a migrations table, so the next start migrates it', async () => {
    const plan = await planMigrations(dataDir, ['runner'], fresh.url);
    await plan.record(['runner']);
    expect((await planMigrations(dataDir, ['runner'], fresh.url)).needed).toEqual(['runner']);
    expect((await planMigrations(dataDir, ['runner'], migrated)).needed).toEqual([]);
  });
});
