import { createRedis, redisSettingsFrom, type RedisClient } from '@rundown/shared';
import { system } from './client.js';

/** A connection to the system's Redis in whatever shape it runs (standalone, or E2E_REDIS=cluster). */
export function systemRedis(name = 'e2e-test'): RedisClient {
  return createRedis(redisSettingsFrom(system().redisEnv), { name });
}
