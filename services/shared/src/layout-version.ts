import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * The layout version of a rundown: a random token in Redis that the rundown service replaces after
 * every committed change of the facts the cells service caches (which cues exist, their type and
 * lock; which public columns exist, their type; whether the rundown lives), before it answers.
 * The cells service keeps those facts per rundown under the token it read before asking for them,
 * and uses them only while the token is unchanged (services/cells/README.md, "Layout cache").
 *
 * A fresh random value, never a counter: Redis here keeps nothing on disk, and a counter that
 * restarted could repeat a value a cache still holds. A lost or expired key is simply a new token.
 */
export const layoutVersionKey = (rundownId: string): string => `layout:v1:${rundownId}`;

/** Keys of rundowns nobody reads or changes go away; a read recreates one (a new token: a miss). */
const TTL_SECONDS = 24 * 3600;

const freshToken = (): string => randomBytes(12).toString('base64url');

/** After a committed layout change: a new token, so every cache holding the old one asks again. */
export async function bumpLayoutVersion(redis: Redis, rundownId: string): Promise<void> {
  await redis.set(layoutVersionKey(rundownId), freshToken(), 'EX', TTL_SECONDS);
}

/**
 * The current token, in one round trip: a missing key gets a fresh one (`SET NX GET`), so the
 * answer is always a token that was in Redis at this instant and that any later change replaces.
 */
export async function readLayoutVersion(redis: Redis, rundownId: string): Promise<string> {
  const token = freshToken();
  const previous = await redis.set(layoutVersionKey(rundownId), token, 'EX', TTL_SECONDS, 'NX', 'GET');
  return previous ?? token;
}
