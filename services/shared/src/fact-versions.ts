import type { RedisClient } from './redis.js';
import { randomToken } from './ids.js';
import { kindOfEvent, type EventPayload, type Kind } from './outbox/codec.js';

/**
 * Facts of a rundown that another service keeps between requests, valid while a version token in
 * Redis is unchanged. The rundown service replaces a fact's token after every committed change of
 * that fact, before it answers the change:
 * - `layout`, kept by the cells service: which cues exist, their type and lock; which public columns
 *   exist, their type; whether the rundown lives (services/cells/README.md, "Layout cache");
 * - `order`, kept by the runner: the cues in show order with their records, the rundown's planned
 *   start, timezone and team, whether it lives (services/runner/README.md, "One transition").
 * A keeper stores the facts under the token it read BEFORE asking for them and uses them only while
 * the token is unchanged, so no read that starts after a change's answer is served what it changed.
 *
 * The outbox relay moves them too, in the same script that appends a change's event to the rundown's
 * stream (outbox/append-script.ts): whoever reads an event and then asks for a fact is never
 * answered from facts kept from before that change, even when the event reached it before the
 * change's answer moved the token (a webhook's `timing.changed` after a cue edit, an SSE `timing`).
 *
 * A fresh random value, never a counter: RedisClient here keeps nothing on disk, and a counter that
 * restarted could repeat a value a keeper still holds. A lost or expired key is simply a new token.
 */
export type RundownFact = 'layout' | 'order';

export const factVersionKey = (fact: RundownFact, rundownId: string): string => `${fact}:v1:{${rundownId}}`;

/** Keys of rundowns nobody reads or changes go away; a read recreates one (a new token: a miss). */
export const FACT_VERSION_TTL_SECONDS = 24 * 3600;

/** The events (§7 names) whose changes may change each fact. */
export const eventsChangingFact: Readonly<Record<RundownFact, readonly EventPayload['$case'][]>> = {
  layout: ['rundown', 'cue', 'column'],
  order: ['rundown', 'cue'],
};

/** The same as event kinds: the relay moves a fact's token when it appends one of them. */
export const kindsChangingFact: Readonly<Record<RundownFact, readonly Kind[]>> = {
  layout: eventsChangingFact.layout.map((name) => kindOfEvent[name]),
  order: eventsChangingFact.order.map((name) => kindOfEvent[name]),
};

/** After a committed change of `facts`: new tokens, so every keeper holding an old one asks again (one round trip). */
export async function bumpFactVersions(redis: RedisClient, rundownId: string, facts: readonly RundownFact[]): Promise<void> {
  if (facts.length === 1) {
    await redis.set(factVersionKey(facts[0]!, rundownId), randomToken(), 'EX', FACT_VERSION_TTL_SECONDS);
    return;
  }
  const pipeline = redis.pipeline();
  for (const fact of facts) pipeline.set(factVersionKey(fact, rundownId), randomToken(), 'EX', FACT_VERSION_TTL_SECONDS);
  for (const [error] of (await pipeline.exec()) ?? []) if (error) throw error;
}

/**
 * The current token of a fact, in one round trip: a missing key gets a fresh one (`SET NX GET`), so
 * the answer is always a token that was in Redis at this instant and that any later change replaces.
 */
export async function readFactVersion(redis: RedisClient, fact: RundownFact, rundownId: string): Promise<string> {
  const token = randomToken();
  const previous = await redis.set(factVersionKey(fact, rundownId), token, 'EX', FACT_VERSION_TTL_SECONDS, 'NX', 'GET');
  return previous ?? token;
}
