import type { TestProject } from 'vitest/node';
import type { MigrationInterface } from 'typeorm';
import { runMigrations, SERVICES } from '@rundown/shared';
import { createDatabase, isolatedRedis, startInfra } from './infra.js';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    redisUrl: string;
  }
}

/**
 * Integration tier: one fresh database, migrated for every service of the services table that
 * has migrations (one after another here; the launcher runs them at once, as each touches only its
 * own schema), and one flushed Redis db for the run.
 */
export default async function setup(project: TestProject) {
  const infra = await startInfra();
  const database = await createDatabase(infra.postgresServerUrl, 'rundown_it');
  for (const { name: schema } of SERVICES.filter((s) => s.migrations)) {
    const { migrations: list } = (await import(`../../services/${schema}/src/migrations/index.ts`)) as {
      migrations: readonly (new () => MigrationInterface)[];
    };
    await runMigrations({ url: database.url, schema, migrations: [...list], applicationName: `it-migrate-${schema}` });
  }
  project.provide('databaseUrl', database.url);
  project.provide('redisUrl', await isolatedRedis(infra.redisUrl, Number(process.env.IT_REDIS_DB ?? 14)));
  return async () => {
    await database.drop();
    await infra.stop();
  };
}
