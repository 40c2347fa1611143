import type { TestProject } from 'vitest/node';
import { createDataSource, runMigrations } from '@rundown/shared';
import { migrations as authMigrations } from '../../services/auth/src/migrations/index.js';
import { migrations as rundownMigrations } from '../../services/rundown/src/migrations/index.js';
import { createDatabase, isolatedRedis, startInfra } from './infra.js';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    redisUrl: string;
  }
}

/** Integration tier: one fresh, migrated database and one flushed Redis db for the run. */
export default async function setup(project: TestProject) {
  const infra = await startInfra();
  const database = await createDatabase(infra.postgresServerUrl, 'rundown_it');
  for (const [schema, list] of [
    ['auth', authMigrations],
    ['rundown', rundownMigrations],
  ] as const) {
    const db = createDataSource({ url: database.url, schema, migrations: [...list], applicationName: `it-migrate-${schema}` });
    await runMigrations(db, schema);
    await db.destroy();
  }
  project.provide('databaseUrl', database.url);
  project.provide('redisUrl', await isolatedRedis(infra.redisUrl, Number(process.env.IT_REDIS_DB ?? 14)));
  return async () => {
    await database.drop();
    await infra.stop();
  };
}
