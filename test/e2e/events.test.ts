import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RedisClient } from '@rundown/shared';
import { readEventIndex, readRundownEvents } from '@rundown/shared';
import { createTeam, v1, type TestTeam } from '../support/client.js';
import { systemRedis } from '../support/system-redis.js';

/**
 * The running system's domain events: a write through the public API reaches the rundown's Redis
 * Stream through the rundown service's outbox relay, within moments (NOTIFY, no polling).
 */
let team: TestTeam;
let owner: string;
let redis: RedisClient;

beforeAll(async () => {
  team = await createTeam();
  owner = await team.token('OWNER');
  redis = systemRedis();
});

afterAll(() => {
  redis.disconnect();
});

describe('domain events', () => {
  it('relays every write of a rundown to its stream and the index, in order', async () => {
    const indexBefore = (await redis.xrevrange('events:index', '+', '-', 'COUNT', 1))[0]?.[0] ?? '0-0';
    const created = await v1('POST', '/rundowns', { token: owner, body: { title: 'Evented' } });
    const id = created.body.data.id as string;
    const started = Date.now();
    const cue = await v1('POST', `/rundowns/${id}/cues`, { token: owner, body: { title: 'Opening' } });
    await v1('PATCH', `/rundowns/${id}/output-message`, { token: owner, body: { text: 'On air' } });
    let events = await readRundownEvents(redis, id, '0-0');
    while (events.length < 4 && Date.now() - started < 5_000) {
      await new Promise((r) => setTimeout(r, 10));
      events = await readRundownEvents(redis, id, '0-0');
    }
    expect(events.map((e) => `${e.event.payload?.$case}`)).toEqual(['rundown', 'cue', 'rundown', 'output_message']);
    const [, cueEvent] = events;
    expect(cueEvent!.event.payload).toMatchObject({ $case: 'cue', value: { id: cue.body.data.id, cue: { title: 'Opening' } } });
    expect(events.every((e) => e.event.team_id === team.id && e.event.rundown_id === id)).toBe(true);
    // The index: runs of the rundown's events in order, each naming its last event and its kinds
    // (written after the events: wait for the entry naming the last).
    let index = (await readEventIndex(redis, indexBefore, { count: 10_000 })).filter((e) => e.rundown_id === id);
    while (index.at(-1)?.event_id !== events.at(-1)!.id && Date.now() - started < 5_000) {
      await new Promise((r) => setTimeout(r, 10));
      index = (await readEventIndex(redis, indexBefore, { count: 10_000 })).filter((e) => e.rundown_id === id);
    }
    let from = 0;
    for (const entry of index) {
      const to = events.findIndex((e) => e.id === entry.event_id);
      expect(to).toBeGreaterThanOrEqual(from);
      expect(entry.kinds).toEqual([...new Set(events.slice(from, to + 1).map((e) => e.event.kind))]);
      from = to + 1;
    }
    expect(from).toBe(events.length);
  });
});
