import { describe, expect, it } from 'vitest';
import { type ConfigError, loadConfig } from './config.js';
import { createRedis, isCluster, redisSettings, redisSettingsProblems, replicationOf, rundownTag, teamTag } from './redis.js';

const load = (env: NodeJS.ProcessEnv) => loadConfig(redisSettings(), env, redisSettingsProblems);
const problems = (env: NodeJS.ProcessEnv): string[] => {
  try {
    load(env);
    return [];
  } catch (error) {
    return (error as ConfigError).problems;
  }
};

describe('Redis settings', () => {
  it('takes one URL by default, as before', () => {
    const s = load({ REDIS_URL: 'redis://127.0.0.1:6379/2' });
    expect(s.REDIS_MODE).toBe('standalone');
    expect(replicationOf(s)).toEqual({ replicas: 0, timeoutMs: 500 });
  });

  it('names what each shape lacks, every problem at once', () => {
    expect(problems({})).toEqual(['REDIS_URL: required when REDIS_MODE is standalone (not set)']);
    expect(problems({ REDIS_MODE: 'sentinel' })).toEqual([
      'REDIS_SENTINELS: required when REDIS_MODE is sentinel (not set)',
      'REDIS_SENTINEL_MASTER: required when REDIS_MODE is sentinel (not set)',
    ]);
    expect(problems({ REDIS_MODE: 'cluster', REDIS_DB: '3' })).toEqual([
      'REDIS_CLUSTER_NODES: required when REDIS_MODE is cluster (not set)',
      'REDIS_DB: a Redis Cluster has database 0 only',
    ]);
    expect(problems({ REDIS_MODE: 'cluster', REDIS_CLUSTER_NODES: 'a:1,b', REDIS_TLS: 'yes' }).map((p) => p.split(':')[0])).toEqual(['REDIS_CLUSTER_NODES', 'REDIS_TLS']);
    expect(problems({ REDIS_MODE: 'cluster', REDIS_CLUSTER_NODES: 'a:1', REDIS_TLS_CA_FILE: '/nonexistent/ca.pem' })).toEqual([
      'REDIS_TLS_CA_FILE: cannot be read (/nonexistent/ca.pem)',
    ]);
    expect(problems({ REDIS_MODE: 'replicated' })[0]).toMatch(/^REDIS_MODE:/);
  });

  it('waits for one replica with sentinel and cluster unless told otherwise', () => {
    expect(replicationOf(load({ REDIS_MODE: 'sentinel', REDIS_SENTINELS: 's1:26379,s2:26379', REDIS_SENTINEL_MASTER: 'm' })).replicas).toBe(1);
    expect(replicationOf(load({ REDIS_MODE: 'cluster', REDIS_CLUSTER_NODES: 'n1:6379', REDIS_WAIT_REPLICAS: '0' })).replicas).toBe(0);
  });

  it('makes a cluster client for cluster, a sentinel-backed connection for sentinel (lazily: nothing connects here)', () => {
    const cluster = createRedis(load({ REDIS_MODE: 'cluster', REDIS_CLUSTER_NODES: '127.0.0.1:1,127.0.0.1:2' }), { name: 't', lazyConnect: true });
    const sentinel = createRedis(load({ REDIS_MODE: 'sentinel', REDIS_SENTINELS: '127.0.0.1:1', REDIS_SENTINEL_MASTER: 'm', REDIS_DB: '2' }), { name: 't', lazyConnect: true });
    expect(isCluster(cluster)).toBe(true);
    expect(isCluster(sentinel)).toBe(false);
    expect(sentinel.options).toMatchObject({ name: 'm', role: 'master', db: 2, sentinels: [{ host: '127.0.0.1', port: 1 }], connectionName: 't' });
    cluster.disconnect();
    sentinel.disconnect();
  });

  it('tags a rundown and a team so that Redis Cluster hashes only the id', () => {
    expect(`events:rundown:${rundownTag('rd_1')}`).toBe('events:rundown:{rd_1}');
    expect(`auth:epoch:${teamTag('team_1')}`).toBe('auth:epoch:{t:team_1}');
  });
});
