import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Redis } from 'ioredis';
import { createLogger, readRundownEvents, type CallerContext, type OutboxRelay, type Database } from '@rundown/shared';
import { Change } from '@rundown/shared/proto/rundown/events/v1/events';
import { rundownOutbox } from '../../services/rundown/src/events/outbox-log.js';
import { domainOf, openDatabase } from './support.js';

/**
 * The rundown service's domain events through its outbox, against real PostgreSQL and Redis:
 * every write commits its events; relays started later (two replicas at once) deliver each
 * event once and in commit order.
 */
let replicas: Database[];
let redis: Redis;
const relays: OutboxRelay[] = [];

function services(db: Database) {
  const d = domainOf(db);
  return { ...d, variables: d.textVariables, message: d.outputMessage };
}

beforeAll(async () => {
  replicas = await Promise.all([1, 2].map((n) => openDatabase(`events-${n}`, 12)));
  redis = new Redis(inject('redisUrl'));
});

afterAll(async () => {
  await Promise.all(relays.map((r) => r.stop()));
  await Promise.all(replicas.map((db) => db.destroy()));
  redis.disconnect();
});

/** One relay per replica, as every rundown service process runs one. */
async function startRelays() {
  for (const db of replicas) {
    relays.push(
      await rundownOutbox.startRelay({ db, databaseUrl: inject('databaseUrl'), redis, logger: createLogger('it', 'silent'), pollMs: 25 }),
    );
  }
}

const ctx = (teamId: string): CallerContext => ({ requestId: 'req_it', teamId, role: 'OWNER' });

/** The stream as `kind change id` lines (plus the record's title/name/value where it has one). */
async function stream(rundownId: string) {
  const read = await readRundownEvents(redis, rundownId, '0-0', { count: 10_000 });
  return read.map(({ event }) => {
    const p = event.payload!;
    const change = Change[(p.value as { change: Change }).change]!.replace('CHANGE_', '').toLowerCase();
    switch (p.$case) {
      case 'rundown':
        return `rundown ${change} ${p.value.rundown?.title ?? ''}`.trim();
      case 'cue':
        return `cue ${change} ${p.value.cue?.title ?? p.value.id}`;
      case 'column':
        return `column ${change} ${p.value.column?.name ?? p.value.id}`;
      case 'mention':
        return `mention ${change} ${p.value.mention?.name ?? p.value.id}`;
      case 'text_variable':
        return `text_variable ${change} ${p.value.key}=${p.value.text_variable?.value ?? ''}`;
      case 'output_message':
        return `output_message ${change} ${p.value.output_message?.text}`;
      default:
        return p.$case;
    }
  });
}

async function until(check: () => Promise<boolean>, ms = 10_000) {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('rundown service events', () => {
  it('commits an event with every write; relays started afterwards deliver each once, in commit order', async () => {
    const team = `team_ev_${Date.now()}`;
    const s = services(replicas[0]!);
    // No relay runs while these commit (the service "died" after each commit, before relaying).
    const { result: rd } = await s.rundowns.create(ctx(team), {
      title: 'Show',
      timezone: null,
      start_time: 1_764_000_000_000,
      status: undefined,
      settings: undefined,
      columns: [],
      cues: [],
    });
    const { result: a } = await s.cues.create(ctx(team), rd.id, { title: 'A', duration_ms: 1000 });
    const { result: b } = await s.cues.create(ctx(team), rd.id, { title: 'B' });
    await s.cues.update(ctx(team), rd.id, { id: a.id, title: 'A2' });
    await s.cues.reorder(ctx(team), rd.id, [
      { id: b.id, parent_id: null },
      { id: a.id, parent_id: null },
    ]);
    const { result: column } = await s.columns.create(ctx(team), rd.id, { name: 'Notes' });
    await s.columns.adminCreate(rd.id, { name: 'Secret', type: 'text', private: true });
    const { result: mention } = await s.mentions.create(ctx(team), rd.id, { name: 'Host' });
    await s.mentions.update(ctx(team), rd.id, mention.id, { name: 'Host' }); // no change: no event
    await s.variables.bulk(ctx(team), rd.id, [{ key: 'v', value: '1' }], false);
    await s.variables.update(ctx(team), rd.id, { key: 'v', value: '2' });
    await s.message.update(ctx(team), rd.id, { text: 'Hi' });
    await s.message.update(ctx(team), rd.id, { text: 'Hi' }); // no change: no event
    await s.columns.delete(ctx(team), rd.id, column.id);
    await s.cues.delete(ctx(team), rd.id, b.id);
    await s.rundowns.update(ctx(team), rd.id, { title: 'Show 2' });
    await s.rundowns.delete(ctx(team), rd.id);
    expect(await stream(rd.id)).toEqual([]);

    await startRelays();
    await until(async () => (await stream(rd.id)).length >= 21);
    await new Promise((r) => setTimeout(r, 200)); // anything extra would show now
    expect(await stream(rd.id)).toEqual([
      'rundown created Show',
      'cue created A',
      'rundown updated Show',
      'cue created B',
      'rundown updated Show',
      'cue updated A2',
      'cue reordered B',
      'cue reordered A2',
      'rundown updated Show',
      'column created Notes',
      'rundown updated Show',
      // the private column: no column event, and the public column order did not change
      'mention created Host',
      'text_variable created v=1',
      'text_variable updated v=2',
      'output_message updated Hi',
      `column removed ${column.id}`,
      'rundown updated Show',
      `cue removed ${b.id}`,
      'rundown updated Show',
      'rundown updated Show 2',
      'rundown removed',
    ]);
    const events = await readRundownEvents(redis, rd.id, '0-0', { count: 100 });
    for (const { event } of events) {
      expect(event).toMatchObject({ rundown_id: rd.id, team_id: team, source: 'rundown' });
      expect(event.event_id).toMatch(/^evt_/);
    }
    expect(new Set(events.map((e) => e.event.event_id)).size).toBe(events.length);
  });

  it('racing writers of one rundown on two replicas: every event once, in the order the writes committed', async () => {
    const team = `team_race_ev_${Date.now()}`;
    const [one, two] = replicas.map(services);
    const { result: rd } = await one!.rundowns.create(ctx(team), { title: 'Race', timezone: null, start_time: null, status: undefined, settings: undefined, columns: [], cues: [] });
    // Each create appends at the end under the rundown lock, so the final order is the commit order.
    await Promise.all(Array.from({ length: 24 }, (_, i) => (i % 2 ? one! : two!).cues.create(ctx(team), rd.id, { title: `c${i}` })));
    const { cues } = await one!.cues.list(ctx(team), rd.id);
    await until(async () => (await stream(rd.id)).filter((l) => l.startsWith('cue created')).length === 24);
    const created = (await stream(rd.id)).filter((l) => l.startsWith('cue created')).map((l) => l.slice('cue created '.length));
    expect(created).toEqual(cues.map((c) => c.title));
  });
});
