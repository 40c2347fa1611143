import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Redis } from 'ioredis';
import {
  compareEventIds,
  createServiceDatabase,
  createLogger,
  encodeEvent,
  eventKeys,
  factVersionKey,
  isContinuous,
  newEvent,
  Outbox,
  outboxTableSql,
  outboxTraceSql,
  Kind,
  readEventIndex,
  readFactVersion,
  readRundownEvents,
  type OutboxRelay,
  type Database,
} from '@rundown/shared';
import { Change } from '@rundown/shared/proto/rundown/events/v1/events';
import { RundownEventFollower } from '../../services/runner/src/jobs/rundown-events.js';

/**
 * The outbox library against real PostgreSQL and Redis, in a scratch schema of its own: what
 * commits is relayed once, in commit order per rundown, whatever dies in between and however many
 * relays run.
 */
const schema = `outbox_it_${randomBytes(3).toString('hex')}`;
const outbox = new Outbox(schema, 'it');
const logger = createLogger('outbox-it', 'silent');
let db: Database;
let redis: Redis;
const relays: OutboxRelay[] = [];

beforeAll(async () => {
  db = createServiceDatabase({ url: inject('databaseUrl'), applicationName: 'it-outbox', poolSize: 12 });
  await db.initialize();
  await db.query(`CREATE SCHEMA "${schema}"`);
  for (const sql of outboxTableSql(schema)) await db.query(sql);
  await db.query(outboxTraceSql(schema));
  redis = new Redis(inject('redisUrl'));
});

afterAll(async () => {
  await Promise.all(relays.map((r) => r.stop()));
  await db.query(`DROP SCHEMA "${schema}" CASCADE`);
  await db.destroy();
  redis.disconnect();
});

const rundownId = () => `rd_${randomBytes(9).toString('base64url')}`;

/** A text-variable event whose value names it, so a stream's order can be read back. */
const event = (rundown: string, label: string) =>
  newEvent(rundown, 'team_it', {
    $case: 'text_variable',
    value: { change: Change.CHANGE_UPDATED, key: 'k', text_variable: { key: 'k', value: label, created_at: new Date(), updated_at: new Date() } },
  });

const labels = async (rundown: string) =>
  (await readRundownEvents(redis, rundown, '0-0', { count: 10_000 })).map((e) =>
    e.event.payload?.$case === 'text_variable' ? e.event.payload.value.text_variable?.value : '?',
  );

async function write(rundown: string, ...names: string[]) {
  await db.transaction((tx) => outbox.enqueue(tx, names.map((n) => event(rundown, n))));
}

/** A write whose transaction rolls back after its enqueue. */
async function writeRolledBack(rundown: string, name: string) {
  await db
    .transaction(async (tx) => {
      await outbox.enqueue(tx, [event(rundown, name)]);
      throw new Error('abort');
    })
    .catch(() => undefined);
}

async function startRelay(options: { pollMs?: number; batchSize?: number; maxLength?: number } = {}) {
  const relay = await outbox.startRelay({
    db,
    databaseUrl: inject('databaseUrl'),
    redis,
    logger,
    pollMs: options.pollMs ?? 60_000,
    batchSize: options.batchSize,
    retention: options.maxLength ? { maxLength: options.maxLength, maxAgeMs: 0 } : undefined,
  });
  relays.push(relay);
  return relay;
}

async function stop(relay: OutboxRelay) {
  await relay.stop();
  relays.splice(relays.indexOf(relay), 1);
}

async function until(check: () => Promise<boolean>, ms = 5_000) {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('transactional outbox', () => {
  it('relays events committed while no relay ran, once and in order; a rolled-back write leaves nothing', async () => {
    const rd = rundownId();
    await write(rd, 'a', 'b');
    await writeRolledBack(rd, 'rolled back');
    await write(rd, 'c');
    expect(await labels(rd)).toEqual([]);

    const relay = await startRelay(); // drains what waited at start
    await until(async () => (await labels(rd)).length === 3);
    await relay.drain();
    expect(await labels(rd)).toEqual(['a', 'b', 'c']);
    const [left] = (await db.query(`SELECT count(*)::int AS n FROM "${schema}".outbox`)) as { n: number }[];
    expect(left?.n).toBe(0);
    await stop(relay);
  });

  it("appends its own process's events from memory and reads back another replica's, in one order", async () => {
    const relay = await startRelay();
    const replica = new Outbox(schema, 'it'); // another process's outbox: the same table and source
    const rd = rundownId();
    const before = relay.taken();
    await write(rd, 'a', 'b');
    await db.transaction((tx) => replica.enqueue(tx, [event(rd, 'c')]));
    await write(rd, 'd');
    await writeRolledBack(rd, 'rolled back');
    await write(rd, 'e');
    await until(async () => (await labels(rd)).length === 5);
    await relay.drain();
    expect(await labels(rd)).toEqual(['a', 'b', 'c', 'd', 'e']);
    const after = relay.taken();
    expect(after.fromMemory - before.fromMemory).toBe(4);
    expect(after.readBack - before.readBack).toBe(1);
    // The index names the rundown's newest event and the kinds of each run.
    const index = (await readEventIndex(redis, '0-0', { count: 1_000_000 })).filter((e) => e.rundown_id === rd);
    expect(index.at(-1)?.event_id).toBe((await readRundownEvents(redis, rd, '0-0')).at(-1)?.id);
    expect(index.every((e) => e.kinds?.join() === `${Kind.KIND_TEXT_VARIABLE}`)).toBe(true);
    await stop(relay);
  });

  it('indexes a bulk as one entry per rundown per relay batch, naming its kinds, not one per event', async () => {
    const relay = await startRelay();
    const [bulk, other] = [rundownId(), rundownId()];
    const cell = (i: number) =>
      newEvent(bulk, 'team_it', { $case: 'cell', value: { change: Change.CHANGE_REMOVED, cue_id: `cue_${i}`, column_id: 'col_1', cell: undefined } });
    // 250 events of one rundown with one of another between them: three append calls of up to 100
    // for the one (each in its own slot), one for the other; then one index entry per rundown.
    const events = [...Array.from({ length: 120 }, (_, i) => cell(i)), event(other, 'between'), event(bulk, 'variable'), ...Array.from({ length: 129 }, (_, i) => cell(120 + i))];
    const indexBefore = (await redis.xrevrange(eventKeys.index, '+', '-', 'COUNT', 1))[0]?.[0] ?? '0-0';
    await db.transaction((tx) => outbox.enqueue(tx, events));
    await relay.drain();
    const stream = await readRundownEvents(redis, bulk, '0-0', { count: 1_000 });
    expect(stream).toHaveLength(250);
    const index = (await readEventIndex(redis, indexBefore, { count: 1_000 })).filter((e) => [bulk, other].includes(e.rundown_id));
    expect(index.map((e) => [e.rundown_id, e.event_id, e.kinds])).toEqual([
      [bulk, stream[249]!.id, [Kind.KIND_CELL, Kind.KIND_TEXT_VARIABLE]],
      [other, (await readRundownEvents(redis, other, '0-0'))[0]!.id, [Kind.KIND_TEXT_VARIABLE]],
    ]);
    await stop(relay);
  });

  it('moves the fact tokens an appended event may change, in the append: a reader of the event never gets a token from before it', async () => {
    const relay = await startRelay();
    const rd = rundownId();
    const tokens = async () => ({ layout: await readFactVersion(redis, 'layout', rd), order: await readFactVersion(redis, 'order', rd) });
    const cue = newEvent(rd, 'team_it', { $case: 'cue', value: { change: Change.CHANGE_UPDATED, id: 'cue_1', cue: undefined } });
    const column = newEvent(rd, 'team_it', { $case: 'column', value: { change: Change.CHANGE_CREATED, id: 'col_1', column: undefined } });
    const cell = newEvent(rd, 'team_it', { $case: 'cell', value: { change: Change.CHANGE_REMOVED, cue_id: 'cue_1', column_id: 'col_1', cell: undefined } });
    const appended = async (e: typeof cue) => {
      const before = await tokens();
      await db.transaction((tx) => outbox.enqueue(tx, [e]));
      await relay.drain();
      const after = await tokens();
      return { layout: after.layout !== before.layout, order: after.order !== before.order };
    };
    expect(await appended(cue)).toEqual({ layout: true, order: true });
    expect(await appended(column)).toEqual({ layout: true, order: false });
    expect(await appended(cell)).toEqual({ layout: false, order: false });
    expect(await appended(event(rd, 'variable'))).toEqual({ layout: false, order: false });
    expect(await redis.ttl(factVersionKey('order', rd))).toBeGreaterThan(3600);
    await stop(relay);
  });

  it('indexes what a relay appended but could not index (it died, or the index write failed) at the next relay, appending nothing twice', async () => {
    const relay = await startRelay({ pollMs: 60_000 });
    const rd = rundownId();
    const indexBefore = (await redis.xrevrange(eventKeys.index, '+', '-', 'COUNT', 1))[0]?.[0] ?? '0-0';
    // The index write fails (another key type in its place): the streams have the events, the rows stay.
    const saved = await redis.dumpBuffer(eventKeys.index);
    await redis.del(eventKeys.index);
    await redis.set(eventKeys.index, 'not a stream');
    try {
      await write(rd, 'a', 'b');
      await expect(relay.drain()).rejects.toThrow(/WRONGTYPE/);
      expect(await labels(rd)).toEqual(['a', 'b']);
      const [{ left } = { left: -1 }] = (await db.query(`SELECT count(*)::int AS left FROM "${schema}".outbox WHERE rundown_id = $1`, [rd])) as { left: number }[];
      expect(left).toBe(2);
    } finally {
      await redis.del(eventKeys.index);
      if (saved) await redis.restore(eventKeys.index, 0, saved);
    }
    // The next relay re-appends nothing (the relayed mark) and writes the index entry it owed.
    expect(await relay.drain()).toBe(0);
    const stream = await readRundownEvents(redis, rd, '0-0');
    expect(stream).toHaveLength(2);
    const index = (await readEventIndex(redis, indexBefore, { count: 1_000 })).filter((e) => e.rundown_id === rd);
    expect(index.map((e) => [e.event_id, e.kinds])).toEqual([[stream[1]!.id, [Kind.KIND_TEXT_VARIABLE]]]);
    const [{ left } = { left: -1 }] = (await db.query(`SELECT count(*)::int AS left FROM "${schema}".outbox WHERE rundown_id = $1`, [rd])) as { left: number }[];
    expect(left).toBe(0);
    await stop(relay);
  });

  it('delivers a committed event within milliseconds through NOTIFY, without a poll', async () => {
    const relay = await startRelay({ pollMs: 60_000 });
    const rd = rundownId();
    const started = Date.now();
    await write(rd, 'fast');
    await until(async () => (await labels(rd)).length === 1, 2_000);
    expect(Date.now() - started).toBeLessThan(1_000);
    await stop(relay);
  });

  it('never appends a relayed event twice: rows left behind by a relay that died before deleting them are skipped', async () => {
    const rd = rundownId();
    await write(rd, 'x', 'y');
    const rows = (await db.query(`SELECT seq, rundown_id, event FROM "${schema}".outbox WHERE rundown_id = $1 ORDER BY seq`, [rd])) as {
      seq: string;
      rundown_id: string;
      event: Buffer;
    }[];
    const relay = await startRelay();
    await relay.drain();
    expect(await labels(rd)).toEqual(['x', 'y']);
    // The relay appended and then "died" before its DELETE committed: the same rows are back.
    await db.query(`INSERT INTO "${schema}".outbox (seq, rundown_id, event) SELECT * FROM unnest($1::bigint[], $2::text[], $3::bytea[])`, [
      rows.map((r) => r.seq),
      rows.map((r) => r.rundown_id),
      rows.map((r) => r.event),
    ]);
    expect(await relay.drain()).toBe(0);
    await write(rd, 'z');
    await relay.drain();
    expect(await labels(rd)).toEqual(['x', 'y', 'z']);
    await stop(relay);
  });

  it('two relays and concurrent writers: every event once, each rundown in its commit order, ids increasing', async () => {
    const a = await startRelay({ batchSize: 7, pollMs: 20 });
    const b = await startRelay({ batchSize: 7, pollMs: 20 });
    const rundowns = [rundownId(), rundownId(), rundownId()];
    // Writers of one rundown run one after another (as under the rundown row lock); rundowns interleave.
    await Promise.all(
      rundowns.map(async (rd) => {
        for (let i = 0; i < 40; i++) await write(rd, `${i}`);
      }),
    );
    await until(async () => (await Promise.all(rundowns.map(labels))).every((l) => l.length >= 40));
    await Promise.all([a.drain(), b.drain()]);
    const index = await readEventIndex(redis, '0-0', { count: 1_000_000 });
    for (const rd of rundowns) {
      expect(await labels(rd)).toEqual(Array.from({ length: 40 }, (_, i) => `${i}`));
      const ids = (await readRundownEvents(redis, rd, '0-0', { count: 100 })).map((e) => e.id);
      expect(ids.every((id, i) => i === 0 || compareEventIds(ids[i - 1]!, id) < 0)).toBe(true);
      // The index: per rundown, runs of its events in order, the last one naming its newest event.
      const entries = index.filter((e) => e.rundown_id === rd);
      expect(entries.every((e) => ids.includes(e.event_id) && e.kinds?.join() === `${Kind.KIND_TEXT_VARIABLE}`)).toBe(true);
      expect(entries.every((e, i) => i === 0 || compareEventIds(entries[i - 1]!.event_id, e.event_id) < 0)).toBe(true);
      expect(entries.at(-1)?.event_id).toBe(ids.at(-1));
    }
    await Promise.all([stop(a), stop(b)]);
  });

  it('keeps commit order when writers of one rundown race (the enqueue lock orders their seqs)', async () => {
    const relay = await startRelay({ pollMs: 20 });
    const rd = rundownId();
    // Each transaction enqueues, then holds on for a random while before committing.
    const committed: string[] = [];
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        db.transaction(async (tx) => {
          await outbox.enqueue(tx, [event(rd, `${i}`)]);
          await new Promise((r) => setTimeout(r, Math.random() * 20));
          committed.push(`${i}`);
        }),
      ),
    );
    await until(async () => (await labels(rd)).length === 20);
    expect(await labels(rd)).toEqual(committed);
    await stop(relay);
  });

  it('trims a stream past its length floor once entries are past their age, and says when a replay is incomplete', async () => {
    const relay = await startRelay({ maxLength: 5 });
    const rd = rundownId();
    const first = rundownId();
    await write(first, 'only');
    await relay.drain();
    const [firstId] = (await readRundownEvents(redis, first, '0-0')).map((e) => e.id);
    for (let i = 0; i < 12; i++) await write(rd, `${i}`);
    await relay.drain();
    // Age 0: everything older than the newest append's millisecond is past its age.
    await new Promise((r) => setTimeout(r, 5));
    await write(rd, '12');
    await relay.drain();
    const kept = await readRundownEvents(redis, rd, '0-0', { count: 100 });
    expect(kept.map((e) => e.event.payload?.$case === 'text_variable' && e.event.payload.value.text_variable?.value)).toEqual(
      ['8', '9', '10', '11', '12'],
    );
    expect(await redis.xlen(eventKeys.rundown(rd))).toBe(5);
    expect(await isContinuous(redis, rd, kept[0]!.id)).toBe(true);
    expect(await isContinuous(redis, rd, '0-0')).toBe(false);
    expect(await isContinuous(redis, first, firstId!)).toBe(true);
    await stop(relay);
  });
  it('the runner follows only the kinds it handles: named in the index, or fetched for entries from before the index named them', async () => {
    const relay = await startRelay({ pollMs: 20 });
    const followed = new Redis(inject('redisUrl'));
    await followed.del('runner:events-followed'); // from now on ('$'), not from a previous run's position
    const refreshed: string[] = [];
    const [cues, cells, legacy, legacyCells] = [rundownId(), rundownId(), rundownId(), rundownId()];
    const follower = new RundownEventFollower(followed, async (id) => refreshed.push(id), logger);
    follower.start();
    await new Promise((r) => setTimeout(r, 100)); // its first blocking read is waiting
    const cue = (rd: string) => newEvent(rd, 'team_it', { $case: 'cue', value: { change: Change.CHANGE_REMOVED, id: 'cue_1', cue: undefined } });
    const cell = (rd: string) =>
      newEvent(rd, 'team_it', { $case: 'cell', value: { change: Change.CHANGE_REMOVED, cue_id: 'cue_1', column_id: 'col_1', cell: undefined } });
    await db.transaction((tx) => outbox.enqueue(tx, [cell(cells), cell(cells), cue(cues), cell(cues)]));
    // Entries as a relay wrote them before the index named kinds: `r` and `id` only.
    for (const [rd, e] of [[legacy, cue(legacy)], [legacyCells, cell(legacyCells)]] as const) {
      const id = await redis.xadd(eventKeys.rundown(rd), '*', 'src', 'it', 'seq', '1', 'e', encodeEvent(e));
      await redis.xadd(eventKeys.index, '*', 'r', rd, 'id', id!);
    }
    await until(async () => refreshed.includes(cues) && refreshed.includes(legacy));
    await relay.drain();
    await new Promise((r) => setTimeout(r, 100));
    expect(refreshed.filter((id) => [cues, cells, legacy, legacyCells].includes(id)).sort()).toEqual([cues, legacy].sort());
    await follower.stop();
    await stop(relay);
  });
});
