import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServiceDatabase, createLogger, eventKeys, isAppError, type CallerContext, type Database } from '@rundown/shared';
import { runnerConfig } from '../../services/runner/src/config.js';
import { RunnerService } from '../../services/runner/src/domain/runner.js';
import { RundownOrderSource } from '../../services/runner/src/clients/order-source.js';
import { BullTimers } from '../../services/runner/src/jobs/timers.js';
import { OutboxEventLog } from '../../services/runner/src/events/outbox-log.js';
import { RedisStatusSink } from '../../services/runner/src/repositories/status-sink.js';
import { ShowsRepository } from '../../services/runner/src/repositories/shows.js';
import { createRundown, createTeam, system, v1 } from '../support/client.js';

// A transition is first tried as one guarded statement from the row the replica last wrote or read
// (services/runner/src/domain/runner.ts, `tryGuarded`); the show may have moved on through another
// replica since. Here two runner replicas are wired in process as services/runner/src/app.ts wires
// one (the system's database, Redis and rundown service over gRPC), each with its own memory of the
// rows, and acted on in turn: every answer must be what one replica alone, under the lock, gives.
// Their timers live under a queue prefix of their own, with no worker: jobs fire only when a test
// calls `fire`.

interface Replica {
  runner: RunnerService<unknown>;
  db: Database;
  timers: BullTimers;
  sink: RedisStatusSink;
  orders: RundownOrderSource;
}

const replicas: Replica[] = [];
let database: pg.Client;
let redis: Redis;

async function replica(name: string): Promise<Replica> {
  const s = system();
  const config = runnerConfig({ ...s.redisEnv, DATABASE_URL: s.databaseUrl, RUNDOWN_ADDR: s.gatewayEnv.RUNDOWN_ADDR, INTERNAL_CONTEXT_KEYS: s.gatewayEnv.INTERNAL_CONTEXT_KEYS });
  const logger = createLogger(name, 'silent');
  const db = await createServiceDatabase({ url: config.DATABASE_URL, applicationName: name, poolSize: 4 }).initialize();
  const orders = new RundownOrderSource(config.RUNDOWN_ADDR, config.GRPC_DEADLINE_MS, config.INTERNAL_CONTEXT_KEYS.signer({ kind: 'service', name: 'runner' }), 1_000);
  const timers = new BullTimers(config, logger, config.TIMER_LEAD_MS, `replicas-e2e-${randomBytes(3).toString('hex')}`);
  const sink = new RedisStatusSink(config, logger);
  const runner = new RunnerService(db, new ShowsRepository(), orders, timers, new OutboxEventLog(), sink) as RunnerService<unknown>;
  return { runner, db, timers, sink, orders };
}

beforeAll(async () => {
  replicas.push(await replica('runner-replica-a'), await replica('runner-replica-b'));
  database = new pg.Client({ connectionString: system().databaseUrl });
  await database.connect();
  redis = new Redis(system().redisUrl);
});

afterAll(async () => {
  for (const r of replicas) {
    await r.timers.close();
    r.sink.close();
    r.orders.close();
    await r.db.destroy();
  }
  await database?.end();
  redis?.disconnect();
});

/** A rundown of `count` plain cues (long: no deadline falls due during a test) and the caller who runs it. */
async function show(count: number, durationMs = 600_000, autoAdvance = false) {
  const team = await createTeam();
  const owner = await team.token('OWNER');
  const rundown = await createRundown(owner, { title: 'Replicas', cues: Array.from({ length: count }, (_, i) => ({ title: `C${i}`, duration_ms: durationMs, auto_advance: autoAdvance })) });
  const ids: string[] = (await v1('GET', `/rundowns/${rundown.id}/cues`, { token: owner })).body.data.items.map((c: { id: string }) => c.id);
  const caller: CallerContext = { requestId: 'req_replicas_e2e', teamId: team.id, role: 'SHOWCALL' };
  return { id: rundown.id as string, ids, caller };
}

/** The deadline job of a show's revision, as the runner places it (services/runner/src/domain/jobs.ts). */
const deadline = (rundownId: string, revision: number, dueAt: number) => ({ id: `deadline_${rundownId}_${revision}`, kind: 'deadline' as const, rundown_id: rundownId, revision, due_at: dueAt });

/** The show as PostgreSQL holds it, and its plays in order. */
async function stored(rundownId: string) {
  const shows = await database.query('SELECT phase, revision::int AS revision, active_cue_id FROM runner.shows WHERE rundown_id = $1', [rundownId]);
  const plays = await database.query('SELECT cue_id, end_reason FROM runner.plays WHERE rundown_id = $1 ORDER BY id', [rundownId]);
  return { show: shows.rows[0] as { phase: string; revision: number; active_cue_id: string | null }, plays: plays.rows as { cue_id: string; end_reason: string | null }[] };
}

describe('two runner replicas, each acting from the row it last knew', () => {
  it('a replica whose row is behind still applies its action to the show as it is', async () => {
    const [a, b] = replicas as [Replica, Replica];
    const s = await show(4);
    expect((await a.runner.act(s.caller, s.id, { kind: 'start' })).status).toMatchObject({ revision: 1, active_cue: { id: s.ids[0] } });
    // B moves the show on; A still knows revision 1.
    expect((await b.runner.act(s.caller, s.id, { kind: 'next' })).status).toMatchObject({ revision: 2, active_cue: { id: s.ids[1] } });
    const third = await a.runner.act(s.caller, s.id, { kind: 'next' });
    expect(third.status).toMatchObject({ revision: 3, active_cue: { id: s.ids[2] }, next_cue: { id: s.ids[3] } });
    expect(third.side_effects.map((e) => e.type)).toContain('runner.active_cue_changed');
    const { show: row, plays } = await stored(s.id);
    expect(row).toMatchObject({ phase: 'running', revision: 3, active_cue_id: s.ids[2] });
    expect(plays).toEqual([
      { cue_id: s.ids[0], end_reason: 'next' },
      { cue_id: s.ids[1], end_reason: 'next' },
      { cue_id: s.ids[2], end_reason: null },
    ]);
  });

  it('never answers an error from a row the show has left: the action is judged on the show as it is', async () => {
    const [a, b] = replicas as [Replica, Replica];
    const s = await show(3);
    await a.runner.act(s.caller, s.id, { kind: 'start' });
    // B ends the show; A still knows it running, where a pause would be a change.
    await b.runner.act(s.caller, s.id, { kind: 'end' });
    const paused = await a.runner.act(s.caller, s.id, { kind: 'pause' }).catch((error: unknown) => error);
    expect(isAppError(paused) && paused.code).toBe('runner.not_running');
    // B starts nothing new; A knows the show ended (it just read it under the lock) and says so from that row.
    const started = await a.runner.act(s.caller, s.id, { kind: 'start' }).catch((error: unknown) => error);
    expect(isAppError(started) && started.code).toBe('runner.ended_cannot_start');
    expect((await stored(s.id)).show).toMatchObject({ phase: 'ended', revision: 2 });
  });

  it('20 next pressed at once across both replicas advance exactly 20 times', async () => {
    const s = await show(25);
    await replicas[0]!.runner.act(s.caller, s.id, { kind: 'start' });
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => replicas[i % 2]!.runner.act(s.caller, s.id, { kind: 'next' })));
    // Each press answered its own revision, and each revision's active cue is the one after the last.
    const byRevision = answers.map((r) => [r.status.revision, r.status.active_cue!.id] as const).sort((x, y) => x[0] - y[0]);
    expect(byRevision).toEqual(Array.from({ length: 20 }, (_, i) => [i + 2, s.ids[i + 1]]));
    const { show: row, plays } = await stored(s.id);
    expect(row).toMatchObject({ revision: 21, active_cue_id: s.ids[20] });
    expect(plays.map((p) => p.cue_id)).toEqual(s.ids.slice(0, 21));
  });

  it('a timed job fires once, through whichever replica takes it, and a job of a revision left behind changes nothing', async () => {
    const [a, b] = replicas as [Replica, Replica];
    const s = await show(3, 300, true);
    const started = await a.runner.act(s.caller, s.id, { kind: 'start' });
    // B moves the show on (revision 2, the second cue); A still knows revision 1.
    const moved = await b.runner.act(s.caller, s.id, { kind: 'next' });
    const due = moved.status.active_cue!.started_at + 300;
    // The first cue's deadline is stale wherever it fires.
    expect(await a.runner.fire(deadline(s.id, 1, started.status.active_cue!.started_at + 300))).toBe('stale');
    // The second cue's deadline, taken by A (its row is behind): the third cue starts at the due instant.
    expect(await a.runner.fire(deadline(s.id, 2, due))).toBe('fired');
    // The same job again, through either replica: the show is past it.
    expect(await b.runner.fire(deadline(s.id, 2, due))).toBe('stale');
    expect(await a.runner.fire(deadline(s.id, 2, due))).toBe('stale');
    const { show: row, plays } = await stored(s.id);
    expect(row).toMatchObject({ revision: 3, phase: 'running', active_cue_id: s.ids[2] });
    expect(plays.map((p) => p.end_reason)).toEqual(['next', 'auto_advance', null]);
    expect((await a.runner.status(s.caller, s.id)).active_cue).toMatchObject({ id: s.ids[2], started_at: due });
  });

  it('a deadline without auto_advance publishes the cue over time once it is due, only while the show is at its revision', async () => {
    const [a, b] = replicas as [Replica, Replica];
    const s = await show(2, 300);
    const started = await b.runner.act(s.caller, s.id, { kind: 'start' });
    const due = started.status.active_cue!.started_at + 300;
    // The show's status events, as relayed to its stream.
    const streamed = () => redis.xlen(eventKeys.rundown(s.id));
    const settled = async (count: number) => {
      for (const end = Date.now() + 5_000; (await streamed()) < count && Date.now() < end; ) await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setTimeout(r, 300)); // and nothing more after it
      return streamed();
    };
    const before = await settled(1);
    // A has never seen this show: it reads the row, and the cue goes over time (an event, no new revision).
    expect(await a.runner.fire(deadline(s.id, 1, due))).toBe('fired');
    expect(await settled(before + 1)).toBe(before + 1);
    // B pauses (revision 2): the old deadline, taken by either replica, publishes nothing more.
    await b.runner.act(s.caller, s.id, { kind: 'pause' });
    expect(await a.runner.fire(deadline(s.id, 1, due))).toBe('stale');
    expect(await b.runner.fire(deadline(s.id, 1, due))).toBe('stale');
    expect(await settled(before + 2)).toBe(before + 2); // the pause's own status event only
    expect((await stored(s.id)).show).toMatchObject({ revision: 2, active_cue_id: s.ids[0] });
  });
});
