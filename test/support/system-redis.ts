import { createRedis, redisSettingsFrom, type RedisClient } from '@rundown/shared';
import { system } from './client.js';

/** A connection to the system's Redis in whatever shape it runs (standalone, or E2E_REDIS=cluster). */
export function systemRedis(name = 'e2e-test'): RedisClient {
  const redis = createRedis(redisSettingsFrom(system().redisEnv), { name });
  // A failover test's connection sees the switch (and the group's stop): the commands say what failed.
  redis.on('error', () => undefined);
  return redis;
}
