import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRundownEvents, runnerStatusKey, type RedisClient } from '@rundown/shared';
import { createRundown, createTeam, v1 } from '../support/client.js';
import { query } from '../support/db.js';
import { startGateway } from '../support/gateway.js';
import { expectProblem } from '../support/problems.js';
import { systemRedis } from '../support/system-redis.js';

// A show that lives while its rundown is edited: every runner change is a `status` domain event in
// the rundown's stream (through the runner's outbox), edits keep next_cue right, and the read
// model (what status and countdown serve) agrees with PostgreSQL.

let owner: string;
let caller: string;
let redis: RedisClient;

beforeAll(async () => {
  const team = await createTeam();
  [owner, caller] = await Promise.all([team.token('OWNER'), team.token('SHOWCALL')]);
  redis = systemRedis();
});

afterAll(() => redis.disconnect());

async function show(titles: string[]): Promise<{ id: string; cue: Record<string, string> }> {
  const rundown = await createRundown(owner, { title: 'Live', cues: titles.map((title) => ({ title, duration_ms: 60_000 })) });
  const list = await v1('GET', `/rundowns/${rundown.id}/cues`, { token: owner });
  return { id: rundown.id, cue: Object.fromEntries(list.body.data.items.map((c: { id: string; title: string }) => [c.title, c.id])) };
}

const act = async (id: string, verb: string, body?: unknown) => {
  const res = await v1('POST', `/rundowns/${id}/action:${verb}`, { token: caller, ...(body === undefined ? {} : { body }) });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
};
const statusOf = async (id: string) => {
  const res = await v1('GET', `/rundowns/${id}/status`, { token: caller });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
};

const v1Via = async (baseUrl: string, path: string) => {
  const res = await fetch(`${baseUrl}${path}`, { headers: { authorization: `Bearer ${caller}` } });
  return { status: res.status, body: (await res.json()) as { data: Record<string, unknown> } };
};

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    const value = await probe().catch((e: unknown) => {
      last = e;
      return undefined;
    });
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Waits until the status's next cue is `expected` (an edit reaches the show through the events). */
const nextBecomes = (id: string, expected: string | null) =>
  until(`next_cue ${expected}`, async () => {
    const s = await statusOf(id);
    return (s.next_cue?.id ?? null) === expected ? s : undefined;
  });

describe('status domain events', () => {
  it('every runner change is a status event in the rundown’s stream, in revision order, with the full cue records', async () => {
    const s = await show(['A', 'B', 'C']);
    await act(s.id, 'start');
    await act(s.id, 'pause');
    await act(s.id, 'next');
    await act(s.id, 'end');
    const events = await until('4 status events', async () => {
      const all = (await readRundownEvents(redis, s.id, '0-0', { count: 1_000 })).filter((e) => e.event.payload?.$case === 'status');
      return all.length >= 4 ? all : undefined;
    });
    const statuses = events.map((e) => (e.event.payload as { $case: 'status'; value: { revision: number; active_cue?: { id: string }; active_cue_record?: { title: string } } }).value);
    expect(statuses.map((v) => v.revision)).toEqual([1, 2, 3, 4]);
    expect(events.every((e) => e.event.source === 'runner')).toBe(true);
    expect(statuses[0]!.active_cue?.id).toBe(s.cue.A);
    expect(statuses[0]!.active_cue_record?.title).toBe('A');
    expect(statuses[2]!.active_cue?.id).toBe(s.cue.B);
  });
});

describe('edits during a show', () => {
  it('a cue inserted, moved, skipped or deleted after the active one keeps next_cue right', async () => {
    const s = await show(['A', 'B', 'C']);
    const started = await act(s.id, 'start');
    expect((await statusOf(s.id)).next_cue.id).toBe(s.cue.B);
    // An edit that changes nothing the show shows is no runner change.
    expect((await v1('PATCH', `/rundowns/${s.id}/cues/${s.cue.C}`, { token: owner, body: { subtitle: 'later' } })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 400));
    expect((await statusOf(s.id)).revision).toBe(started.revision);
    const inserted = await v1('POST', `/rundowns/${s.id}/cues`, { token: owner, body: { title: 'New', duration_ms: 1_000, position: { after_cue_id: s.cue.A } } });
    expect(inserted.status, inserted.text).toBe(201);
    const after = await nextBecomes(s.id, inserted.body.data.id);
    expect(after.next_cue.title).toBe('New');
    expect(after.revision).toBeGreaterThan(1);
    await v1('PATCH', `/rundowns/${s.id}/cues/${inserted.body.data.id}`, { token: owner, body: { skip: true } });
    await nextBecomes(s.id, s.cue.B!);
    await v1('PATCH', `/rundowns/${s.id}/cues/${s.cue.C}`, { token: owner, body: { position: { after_cue_id: s.cue.A } } });
    await nextBecomes(s.id, s.cue.C!);
    await v1('PATCH', `/rundowns/${s.id}/cues/${s.cue.C}`, { token: owner, body: { type: 'heading' } });
    await nextBecomes(s.id, s.cue.B!);
    const retitled = await v1('PATCH', `/rundowns/${s.id}/cues/${s.cue.B}`, { token: owner, body: { title: 'B, renamed' } });
    expect(retitled.status).toBe(200);
    await until('the new title', async () => ((await statusOf(s.id)).next_cue.title === 'B, renamed' ? true : undefined));
    expect((await v1('DELETE', `/rundowns/${s.id}/cues/${s.cue.B}`, { token: owner })).status).toBe(204);
    await nextBecomes(s.id, null);
    expect((await statusOf(s.id)).active_cue.id).toBe(s.cue.A);
  });

  it('the active cue deleted or converted keeps playing; next and previous go to its neighbours', async () => {
    const s = await show(['A', 'B', 'C', 'D']);
    await act(s.id, 'jump', { cue_id: s.cue.B });
    const before = await statusOf(s.id);
    expect((await v1('DELETE', `/rundowns/${s.id}/cues/${s.cue.B}`, { token: owner })).status).toBe(204);
    // The rule: the active cue stays on air until the caller moves on; its neighbours are where it stood.
    await until('the refresh', async () => ((await statusOf(s.id)).revision > before.revision ? true : undefined)).catch(() => undefined);
    const during = await statusOf(s.id);
    expect(during.active_cue).toEqual(before.active_cue);
    expect(during.next_cue.id).toBe(s.cue.C);
    const back = await act(s.id, 'previous');
    expect(back.active_cue.id).toBe(s.cue.A);
    // Converted while active: same rule.
    await act(s.id, 'jump', { cue_id: s.cue.C });
    expect((await v1('PATCH', `/rundowns/${s.id}/cues/${s.cue.C}`, { token: owner, body: { type: 'heading' } })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 300));
    const converted = await statusOf(s.id);
    expect(converted.active_cue.id).toBe(s.cue.C);
    expect(converted.next_cue.id).toBe(s.cue.D);
    expect((await act(s.id, 'next')).active_cue.id).toBe(s.cue.D);
    expect((await act(s.id, 'previous')).active_cue.id).toBe(s.cue.A);
  });

  it('an action right after an edit plays the edited order (the runner keeps orders between actions, never past an edit)', async () => {
    const s = await show(['A', 'B', 'C']);
    await act(s.id, 'start');
    // The runner now holds this order; each edit below answers before the action is sent, and the
    // action must see it at once, whatever the event follower has done by then.
    const inserted = await v1('POST', `/rundowns/${s.id}/cues`, { token: owner, body: { title: 'Inserted', position: { after_cue_id: s.cue.A } } });
    expect(inserted.status, inserted.text).toBe(201);
    expect((await act(s.id, 'next')).active_cue.id).toBe(inserted.body.data.id);
    expect((await v1('PATCH', `/rundowns/${s.id}/cues/${s.cue.B}`, { token: owner, body: { title: 'B, renamed' } })).status).toBe(200);
    const renamed = await act(s.id, 'next');
    expect(renamed.active_cue.id).toBe(s.cue.B);
    expect(renamed.active_cue.title).toBe('B, renamed');
    expect((await v1('PATCH', `/rundowns/${s.id}/cues/${s.cue.C}`, { token: owner, body: { skip: true } })).status).toBe(200);
    expectProblem(await v1('POST', `/rundowns/${s.id}/action:next`, { token: caller }), 409, 'runner.no_next_cue');
  });

  it('the pre-show next cue follows edits too', async () => {
    const s = await show(['A', 'B']);
    expect((await statusOf(s.id)).next_cue.id).toBe(s.cue.A);
    const first = await v1('POST', `/rundowns/${s.id}/cues`, { token: owner, body: { title: 'Cold open', position: { start: true } } });
    await nextBecomes(s.id, first.body.data.id);
  });
});

describe('read model', () => {
  it('a second gateway serves each change made through the first (its memory follows the runner’s channel)', async () => {
    const s = await show(['A', 'B', 'C']);
    const other = await startGateway();
    try {
      const read = async () => (await v1Via(other.baseUrl, `/rundowns/${s.id}/status`)).body.data;
      expect((await read()).phase).toBe('pre-show');
      for (const verb of ['start', 'next', 'pause', 'next', 'end']) {
        const changed = await act(s.id, verb);
        expect(await read()).toEqual({ ...changed, server_time: expect.any(Number) });
      }
    } finally {
      await other.stop();
    }
  });

  it('serves what PostgreSQL has (same revision, same cues) and is cleaned up with the rundown', async () => {
    const s = await show(['A', 'B']);
    await act(s.id, 'start');
    const served = await statusOf(s.id);
    const [row] = await query<{ revision: string; active_cue_id: string; started_at: string }>(
      'SELECT revision, active_cue_id, started_at FROM runner.shows WHERE rundown_id = $1',
      [s.id],
    );
    expect(Number(row!.revision)).toBe(served.revision);
    expect(row!.active_cue_id).toBe(served.active_cue.id);
    expect(Number(row!.started_at)).toBe(served.active_cue.started_at);
    expect((await v1('DELETE', `/rundowns/${s.id}`, { token: owner })).status).toBe(204);
    await until('the show removed', async () => ((await query('SELECT 1 FROM runner.shows WHERE rundown_id = $1', [s.id])).length === 0 ? true : undefined));
    // The read model's key and the final event follow the commit (the key after it, the event through the outbox relay).
    await until('the read model key removed', async () => ((await redis.exists(runnerStatusKey(s.id))) === 0 ? true : undefined));
    const gone = await v1('GET', `/rundowns/${s.id}/status`, { token: caller });
    expect(gone.status).toBe(404);
    const statusEvents = () => readRundownEvents(redis, s.id, '0-0', { count: 1_000 }).then((all) => all.filter((e) => e.event.payload?.$case === 'status'));
    const final = await until('the final status event', async () => {
      const events = await statusEvents();
      // The removal's event is the one with a revision past the show's last (the start's).
      return events.find((e) => Number((e.event.payload as { value: { revision: number } }).value.revision) > served.revision);
    });
    const value = (final.event.payload as { value: { active_cue?: unknown; next_cue?: unknown } }).value;
    expect(value.active_cue, JSON.stringify(value)).toBeUndefined();
    expect(value.next_cue, JSON.stringify(value)).toBeUndefined();
  });
});
