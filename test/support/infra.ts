import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import pg from 'pg';
import { Redis } from 'ioredis';

/**
 * Where the tests find PostgreSQL and Redis: a testcontainers pair when a Docker engine
 * answers (and TEST_USE_CONTAINERS is not "0"), otherwise TEST_DATABASE_URL / TEST_REDIS_URL,
 * otherwise the local defaults. Each run gets a database of its own, dropped at the end.
 */
export interface TestInfra {
  /** A server URL (database part is replaced per run). */
  postgresServerUrl: string;
  redisUrl: string;
  stop(): Promise<void>;
}

async function dockerAnswers(): Promise<boolean> {
  if (process.env.TEST_USE_CONTAINERS === '0') return false;
  // Without a socket or DOCKER_HOST there is nothing to ask (and loading testcontainers for nothing leaves handles open).
  if (!process.env.DOCKER_HOST && !existsSync('/var/run/docker.sock')) return false;
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    await Promise.race([getContainerRuntimeClient(), new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), 3_000))]);
    return true;
  } catch {
    return false;
  }
}

export async function startInfra(): Promise<TestInfra> {
  if (await dockerAnswers()) {
    const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
    const { RedisContainer } = await import('@testcontainers/redis');
    const [postgres, redis] = await Promise.all([
      new PostgreSqlContainer('postgres:15-alpine').withUsername('postgres').withPassword('postgres').start(),
      new RedisContainer('redis:7-alpine').start(),
    ]);
    return {
      postgresServerUrl: postgres.getConnectionUri(),
      redisUrl: redis.getConnectionUrl(),
      stop: async () => {
        await Promise.all([postgres.stop(), redis.stop()]);
      },
    };
  }
  return {
    postgresServerUrl: process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    redisUrl: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0',
    stop: async () => undefined,
  };
}

export function withDatabase(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/** Creates a fresh database for this run and returns its URL and a function that drops it. */
export async function createDatabase(serverUrl: string, prefix: string): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  return {
    url: withDatabase(serverUrl, name),
    name,
    drop: async () => {
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

/** A Redis logical database of its own for this run (the last ones, rarely used by hand). */
export async function isolatedRedis(redisUrl: string, index: number): Promise<string> {
  const url = new URL(redisUrl);
  url.pathname = `/${index}`;
  const redis = new Redis(url.toString(), { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  await redis.flushdb();
  redis.disconnect();
  return url.toString();
}
