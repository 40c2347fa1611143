import type { TestProject } from 'vitest/node';
import { startSystem, type SystemUnderTest } from './system.js';

declare module 'vitest' {
  export interface ProvidedContext {
    system: SystemUnderTest;
  }
}

/** End-to-end tier: one whole system for the run (see startSystem), stopped at the end. */
export default async function setup(project: TestProject) {
  const { system, stop } = await startSystem({
    databasePrefix: 'rundown_e2e',
    redisDb: Number(process.env.E2E_REDIS_DB ?? 15),
    logLevel: process.env.E2E_LOG_LEVEL ?? 'warn',
    verbose: Boolean(process.env.E2E_VERBOSE),
  });
  project.provide('system', system);
  return stop;
}
