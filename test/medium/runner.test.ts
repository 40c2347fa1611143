import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createServiceDatabase, createLogger, newId, runnerStatusKey, standaloneRedis, type CallerContext, type StoredRunnerStatus, type Database } from '@rundown/shared';
import { CueType, SkippedBy, type Cue } from '@rundown/shared/proto/rundown/rundown/v1/cues';
import type { OrderSource, RunnerService, SourcedOrder } from '../../services/runner/src/domain/runner.js';
import type { OrderedCue } from '../../services/runner/src/domain/show.js';
import { BullTimers } from '../../services/runner/src/jobs/timers.js';
import { RedisStatusSink } from '../../services/runner/src/repositories/status-sink.js';
import { runnerDomain } from '../../services/runner/src/wiring.js';

/**
 * The runner's RunnerService as the service wires it (services/runner/src/wiring.ts) against real
 * PostgreSQL (its rows, plays and outbox) and Redis (the status read model, BullMQ timers under a
 * queue prefix of this file's own), no transport. The playable order is the rundown context's, outside
 * this tier: an order source answering orders the test sets, as the gRPC one answers the rundown
 * service's.
 */
const orders = new Map<string, SourcedOrder<Cue>>();
const orderSource: OrderSource<Cue> = {
  get: (rundownId) => {
    const order = orders.get(rundownId);
    return order ? Promise.resolve(order) : Promise.reject(Object.assign(new Error('gone'), { code: 'rundowns.not_found' }));
  },
};

let db: Database;
let redis: Redis;
let timers: BullTimers;
let sink: RedisStatusSink;
let runner: RunnerService<Cue>;
let outboxRows: (rundownId: string) => Promise<number>;

beforeAll(async () => {
  const logger = createLogger('medium-runner', 'silent');
  db = await createServiceDatabase({ url: inject('databaseUrl'), applicationName: 'medium-runner', poolSize: 8 }).initialize();
  redis = new Redis(inject('redisUrl'));
  timers = new BullTimers(standaloneRedis(inject('redisUrl')), logger, 30, `medium-runner-${randomBytes(3).toString('hex')}`);
  sink = new RedisStatusSink(standaloneRedis(inject('redisUrl')), logger);
  runner = runnerDomain(db, { orders: orderSource, timers, sink }).runner;
  await timers.start((job) => runner.fire(job), 4);
  outboxRows = async (rundownId) => Number(((await db.query('SELECT count(*)::int AS n FROM runner.outbox WHERE rundown_id = $1', [rundownId])) as { n: number }[])[0]!.n);
});

afterAll(async () => {
  await timers?.close();
  sink?.close();
  redis?.disconnect();
  await db?.destroy();
});

/**
 * A rundown of the given cues (durations in ms) for a fresh team; answers its id and an OWNER caller of
 * that team. `shape` makes a cue a heading or a skipped one (the playable order the rundown service answers).
 */
function show(durations: number[], autoAdvance = false, shape: (i: number) => Pick<OrderedCue, 'type' | 'skipped'> | undefined = () => undefined): { id: string; caller: CallerContext } {
  const id = newId('rd');
  const teamId = `team_mr_${randomBytes(4).toString('hex')}`;
  const cues: OrderedCue[] = durations.map((duration_ms, i) => ({
    id: `cue_${i + 1}_${id}`,
    type: 'cue',
    title: `Cue ${i + 1}`,
    duration_ms,
    skipped: false,
    auto_advance: autoAdvance,
    scheduled: false,
    start_time: null,
    ...shape(i),
  }));
  const records = new Map(
    cues.map((c): [string, Cue] => [
      c.id,
      { id: c.id, type: CueType.CUE_TYPE_CUE, title: c.title, subtitle: '', duration_ms: c.duration_ms, prevent_edits: false, skip: false, skipped_by: SkippedBy.SKIPPED_BY_UNSPECIFIED, auto_advance: autoAdvance, scheduled: false, created_at: new Date(), updated_at: new Date() },
    ]),
  );
  orders.set(id, { team_id: teamId, cues, records, start_time: null, timezone: null });
  return { id, caller: { requestId: 'req_medium_runner', teamId, role: 'OWNER' } };
}

const plays = async (rundownId: string) => Number(((await db.query('SELECT count(*)::int AS n FROM runner.plays WHERE rundown_id = $1', [rundownId])) as { n: number }[])[0]!.n);

async function stored(rundownId: string): Promise<StoredRunnerStatus | null> {
  const raw = await redis.get(runnerStatusKey(rundownId));
  return raw === null ? null : (JSON.parse(raw) as StoredRunnerStatus);
}

describe('RunnerService (domain + PostgreSQL + Redis)', () => {
  it('commits each transition with its status event and writes the read model before answering', async () => {
    const { id, caller } = show([60_000, 60_000]);
    const started = await runner.act(caller, id, { kind: 'start' });
    expect(started.status).toMatchObject({ phase: 'running', revision: 1, active_cue: { id: `cue_1_${id}` }, next_cue: { id: `cue_2_${id}` } });
    expect(await stored(id)).toMatchObject({ rundown_id: id, team_id: caller.teamId, phase: 'running', revision: 1 });
    const next = await runner.act(caller, id, { kind: 'next' });
    expect(next.status).toMatchObject({ revision: 2, active_cue: { id: `cue_2_${id}` }, next_cue: null });
    expect(await stored(id)).toMatchObject({ revision: 2, active_cue: { id: `cue_2_${id}` } });
    expect(await outboxRows(id)).toBe(2);
    // A read answers PostgreSQL's state.
    expect(await runner.status(caller, id)).toMatchObject({ phase: 'running', revision: 2, active_cue: { id: `cue_2_${id}` } });
  });

  it('serializes racing actions on one rundown: each applied once, on the state the one before left', async () => {
    const { id, caller } = show([60_000, 60_000, 60_000, 60_000]);
    await runner.act(caller, id, { kind: 'start' });
    const results = await Promise.all([1, 2, 3].map(() => runner.act(caller, id, { kind: 'next' })));
    expect(results.map((r) => r.status.revision).sort()).toEqual([2, 3, 4]);
    expect(await runner.status(caller, id)).toMatchObject({ revision: 4, active_cue: { id: `cue_4_${id}` } });
    expect(await outboxRows(id)).toBe(4);
  });

  it('applies an action retried with the same request key once', async () => {
    const { id, caller } = show([60_000, 60_000, 60_000]);
    await runner.act(caller, id, { kind: 'start' });
    const [first, again] = await Promise.all([runner.act(caller, id, { kind: 'next' }, 'key-1'), runner.act(caller, id, { kind: 'next' }, 'key-1')]);
    expect(first.status.revision).toBe(2);
    expect(again.status.revision).toBe(2);
    expect(await runner.status(caller, id)).toMatchObject({ revision: 2, active_cue: { id: `cue_2_${id}` } });
  });

  it('hides a rundown from another team and from a token scoped to another rundown', async () => {
    const { id, caller } = show([60_000]);
    await expect(runner.act({ ...caller, teamId: 'team_other' }, id, { kind: 'start' })).rejects.toMatchObject({ code: 'rundowns.not_found' });
    await expect(runner.status({ ...caller, tokenRundownId: newId('rd') }, id)).rejects.toMatchObject({ code: 'rundowns.not_found' });
    await expect(runner.status({ ...caller, tokenRundownId: id }, id)).resolves.toMatchObject({ phase: 'pre-show', revision: 0 });
    expect(await outboxRows(id)).toBe(0);
  });

  it('fires an auto_advance deadline once, from its delayed job, and moves to the next cue', async () => {
    const { id, caller } = show([300, 60_000], true);
    await runner.act(caller, id, { kind: 'start' });
    const until = Date.now() + 15_000;
    let now = await stored(id);
    while (now?.revision !== 2 && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 50));
      now = await stored(id);
    }
    expect(now).toMatchObject({ revision: 2, active_cue: { id: `cue_2_${id}` } });
    await new Promise((r) => setTimeout(r, 500)); // a second firing would show up here
    expect(await runner.status(caller, id)).toMatchObject({ revision: 2, active_cue: { id: `cue_2_${id}` } });
  });

  it('refuses pause, adjust, next, previous and end before the show (runner.not_running), changing nothing', async () => {
    const { id, caller } = show([60_000, 60_000]);
    for (const action of [{ kind: 'pause' }, { kind: 'adjust', delta_ms: 1000 }, { kind: 'next' }, { kind: 'previous' }, { kind: 'end' }] as const) {
      await expect(runner.act(caller, id, action), action.kind).rejects.toMatchObject({ code: 'runner.not_running' });
    }
    expect(await runner.status(caller, id)).toMatchObject({ phase: 'pre-show', revision: 0 });
    expect(await outboxRows(id)).toBe(0);
  });

  it('answers runner.no_playable_cue to start a rundown with no playable cue (headings and skipped cues only)', async () => {
    const { id, caller } = show([0, 5_000], false, (i) => (i === 0 ? { type: 'heading', skipped: false } : { type: 'cue', skipped: true }));
    await expect(runner.act(caller, id, { kind: 'start' })).rejects.toMatchObject({ code: 'runner.no_playable_cue' });
    expect(await runner.status(caller, id)).toMatchObject({ phase: 'pre-show', revision: 0, next_cue: null });
  });

  it('20 next at once advance exactly 20 times, in order: each its own revision and cue, every play recorded', async () => {
    const { id, caller } = show(Array.from({ length: 25 }, () => 60_000));
    await runner.act(caller, id, { kind: 'start' });
    const answers = await Promise.all(Array.from({ length: 20 }, () => runner.act(caller, id, { kind: 'next' })));
    // Each press saw a different revision and a different cue: none skipped, none repeated.
    const seen = answers.map((a) => [a.status.revision, a.status.active_cue?.id] as const).sort((x, y) => x[0] - y[0]);
    expect(seen.map(([rev]) => rev)).toEqual(Array.from({ length: 20 }, (_, i) => i + 2));
    expect(seen.map(([, cue]) => cue)).toEqual(Array.from({ length: 20 }, (_, i) => `cue_${i + 2}_${id}`));
    expect(await runner.status(caller, id)).toMatchObject({ revision: 21, active_cue: { id: `cue_21_${id}` } });
    expect(await stored(id)).toMatchObject({ revision: 21, active_cue: { id: `cue_21_${id}` } });
    expect(await plays(id)).toBe(21);
    expect(await outboxRows(id)).toBe(21);
  });

  it('20 next at once on 10 cues stop at the end: 9 advance, 11 answer runner.no_next_cue', async () => {
    const { id, caller } = show(Array.from({ length: 10 }, () => 60_000));
    await runner.act(caller, id, { kind: 'start' });
    const answers = await Promise.allSettled(Array.from({ length: 20 }, () => runner.act(caller, id, { kind: 'next' })));
    expect(answers.filter((a) => a.status === 'fulfilled')).toHaveLength(9);
    for (const a of answers.filter((x) => x.status === 'rejected')) expect((a as PromiseRejectedResult).reason).toMatchObject({ code: 'runner.no_next_cue' });
    expect(await runner.status(caller, id)).toMatchObject({ revision: 10, active_cue: { id: `cue_10_${id}` } });
  });
});
