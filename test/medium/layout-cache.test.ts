import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { AppError, createLogger, factVersionKey, readFactVersion, type CallerContext, type Database } from '@rundown/shared';
import { CachedCoordinates } from '../../services/cells/src/clients/layout-cache.js';
import type { CoordinatesPort, Layout, LayoutQuery } from '../../services/cells/src/domain/coordinates.js';
import { RedisFactVersions } from '../../services/rundown/src/events/fact-versions.js';
import { rundownDomain, type RundownDomain } from '../../services/rundown/src/wiring.js';
import { emptyRundown, openDatabase, quota, teamCaller } from './support.js';

/**
 * The cells service's layout cache over the rundown domain's real answers (PostgreSQL) and real
 * layout versions (Redis, written by the rundown domain as the service wires it): after every
 * change the domain has answered, the cache answers what the rundown service answers.
 */
let db: Database;
let redis: Redis;
let domain: RundownDomain;
/** The rundown service's answer, as the gRPC adapter would carry it; counts the questions. */
let asked: LayoutQuery[];
let authoritative: CoordinatesPort;

beforeAll(async () => {
  db = await openDatabase('layout-cache');
  redis = new Redis(inject('redisUrl'));
  domain = rundownDomain(db, { cursorSecret: 'c'.repeat(32), plan: quota, versions: new RedisFactVersions(redis, createLogger('medium'), 1_000) });
  authoritative = {
    describe: (ctx, rundownId, q) => {
      asked.push(q);
      return domain.coordinates.describe(ctx, rundownId, { cueIds: q.cueIds ?? [], columnIds: q.columnIds ?? [], allCues: q.allCues ?? false, allColumns: q.allColumns ?? false });
    },
    existing: async (ids) => new Set(await domain.coordinates.existing(ids)),
  };
});

afterAll(async () => {
  redis?.disconnect();
  await db?.destroy();
});

const cacheOver = (inner: CoordinatesPort, maxAgeMs = 60_000) =>
  new CachedCoordinates(inner, (id) => readFactVersion(redis, 'layout', id), { maxAgeMs, maxFacts: 10_000 });

/** A rundown with columns A, B and cues: two `cue`s and a heading. */
async function newRundown(ctx: CallerContext) {
  const { result } = await domain.rundowns.create(ctx, {
    ...emptyRundown,
    title: 'cache',
    columns: [{ name: 'A' }, { name: 'B' }],
    cues: [
      { fields: { type: 'cue' as const, title: 'one' }, cells: [], children: [] },
      { fields: { type: 'cue' as const, title: 'two' }, cells: [], children: [] },
      { fields: { type: 'heading' as const, title: 'head' }, cells: [], children: [] },
    ],
  });
  const { cues } = await domain.cues.list(ctx, result.id);
  return { id: result.id, cues: cues.map((c) => c.id), columns: result.column_order };
}

const sorted = (layout: Layout): Layout => ({
  cues: [...layout.cues].sort((a, b) => a.id.localeCompare(b.id)),
  columns: [...layout.columns].sort((a, b) => a.id.localeCompare(b.id)),
});

/** The cache's answer and the rundown service's to the same question, side by side. */
async function both(cache: CoordinatesPort, ctx: CallerContext, rundownId: string, query: LayoutQuery) {
  const cached = await cache.describe(ctx, rundownId, query);
  const truth = await domain.coordinates.describe(ctx, rundownId, {
    cueIds: query.cueIds ?? [],
    columnIds: query.columnIds ?? [],
    allCues: query.allCues ?? false,
    allColumns: query.allColumns ?? false,
  });
  return { cached: sorted(cached), truth: sorted(truth) };
}

const problemOf = (promise: Promise<unknown>) =>
  promise.then(
    () => 'answered',
    (error: unknown) => (error instanceof AppError ? error.code : String(error)),
  );

describe('layout cache', () => {
  it('asks the rundown service once for the whole layout, then answers any question from it', async () => {
    asked = [];
    const ctx = teamCaller();
    const r = await newRundown(ctx);
    const cache = cacheOver(authoritative);
    const questions: LayoutQuery[] = [
      { cueIds: [r.cues[0]!], columnIds: [r.columns[0]!] },
      { cueIds: [r.cues[2]!, 'cue_nope', r.cues[2]!], columnIds: ['col_nope'] },
      { cueIds: [], columnIds: [r.columns[1]!, r.columns[0]!] },
      { allCues: true, allColumns: true },
      { cueIds: ['not an id \u0000'], allColumns: true },
    ];
    for (const query of questions) {
      const { cached, truth } = await both(cache, ctx, r.id, query);
      expect(cached).toEqual(truth);
    }
    expect(asked).toEqual([{ allCues: true, allColumns: true }]);
  });

  it('after each answered layout change, the very next question gets the new facts', async () => {
    const ctx = teamCaller();
    const r = await newRundown(ctx);
    const cache = cacheOver(authoritative);
    const all = { allCues: true, allColumns: true };
    const check = async () => {
      const { cached, truth } = await both(cache, ctx, r.id, all);
      expect(cached).toEqual(truth);
      return cached;
    };
    await check();
    const { result: added } = await domain.cues.create(ctx, r.id, { title: 'three' });
    expect((await check()).cues.map((c) => c.id)).toContain(added.id);
    await domain.cues.update(ctx, r.id, { id: r.cues[0]!, type: 'heading' });
    expect((await check()).cues.find((c) => c.id === r.cues[0])?.type).toBe('heading');
    await domain.cues.bulk(ctx, r.id, [{ patch: { id: r.cues[0]!, type: 'cue' } }]);
    expect((await check()).cues.find((c) => c.id === r.cues[0])?.type).toBe('cue');
    await domain.cues.setPreventEdits(r.id, r.cues[1]!, true);
    expect((await check()).cues.find((c) => c.id === r.cues[1])?.prevent_edits).toBe(true);
    await domain.cues.delete(ctx, r.id, r.cues[2]!);
    expect((await check()).cues.map((c) => c.id)).not.toContain(r.cues[2]);
    const { result: column } = await domain.columns.create(ctx, r.id, { name: 'C' });
    expect((await check()).columns.map((c) => c.id)).toContain(column.id);
    await domain.columns.delete(ctx, r.id, r.columns[0]!);
    expect((await check()).columns.map((c) => c.id)).not.toContain(r.columns[0]);
    await domain.rundowns.delete(ctx, r.id);
    expect(await problemOf(cache.describe(ctx, r.id, all))).toBe('rundowns.not_found');
  });

  it('two replicas, each with its own cache, both see a change answered through either', async () => {
    const ctx = teamCaller();
    const r = await newRundown(ctx);
    const [one, two] = [cacheOver(authoritative), cacheOver(authoritative)];
    const query = { cueIds: [r.cues[0]!, r.cues[1]!] };
    for (const replica of [one, two]) expect((await replica.describe(ctx, r.id, query)).cues).toHaveLength(2);
    await domain.cues.delete(ctx, r.id, r.cues[1]!);
    for (const replica of [one, two]) expect((await replica.describe(ctx, r.id, query)).cues.map((c) => c.id)).toEqual([r.cues[0]]);
  });

  it('changes that leave the facts as they are keep the version: a title edit, a reorder, a rename, a private column', async () => {
    const ctx = teamCaller();
    const r = await newRundown(ctx);
    const token = await readFactVersion(redis, 'layout', r.id);
    await domain.cues.update(ctx, r.id, { id: r.cues[0]!, title: 'renamed' });
    await domain.cues.reorder(ctx, r.id, [r.cues[2]!, r.cues[1]!, r.cues[0]!].map((id) => ({ id, parent_id: null })));
    await domain.columns.update(ctx, r.id, r.columns[0]!, { name: 'AA' });
    await domain.columns.adminCreate(r.id, { name: 'hidden', type: 'text', private: true });
    expect(await redis.get(factVersionKey('layout', r.id))).toBe(token);
    await domain.cues.update(ctx, r.id, { id: r.cues[0]!, type: 'heading' });
    expect(await redis.get(factVersionKey('layout', r.id))).not.toBe(token);
  });

  it('stores an answer under the version read before asking: a change committed while it was asked is seen next time', async () => {
    const ctx = teamCaller();
    const r = await newRundown(ctx);
    let racing = true;
    // The rundown service reads the old facts, then a type change commits and is answered (new
    // version) before that answer arrives.
    const slow: CoordinatesPort = {
      describe: async (c, id, q) => {
        const answer = await authoritative.describe(c, id, q);
        if (racing) {
          racing = false;
          await domain.cues.update(ctx, r.id, { id: r.cues[0]!, type: 'heading' });
        }
        return answer;
      },
      existing: authoritative.existing,
    };
    const cache = cacheOver(slow);
    const first = await cache.describe(ctx, r.id, { cueIds: [r.cues[0]!] });
    expect(first.cues[0]?.type).toBe('cue');
    const next = await cache.describe(ctx, r.id, { cueIds: [r.cues[0]!] });
    expect(next.cues[0]?.type).toBe('heading');
  });

  it('concurrent misses of one rundown share one question; another team’s miss asks its own (and is refused)', async () => {
    asked = [];
    const ctx = teamCaller();
    const r = await newRundown(ctx);
    const cache = cacheOver(authoritative);
    const query = { cueIds: [r.cues[0]!], columnIds: [r.columns[0]!] };
    const stranger = teamCaller();
    const answers = await Promise.all([
      ...Array.from({ length: 8 }, () => problemOf(cache.describe(ctx, r.id, query))),
      problemOf(cache.describe(stranger, r.id, query)),
    ]);
    expect(answers).toEqual([...Array.from({ length: 8 }, () => 'answered'), 'rundowns.not_found']);
    // The eight share one question. The stranger's miss asks its own (never sharing the owner's), unless
    // the owner's answer was stored before its version read came back: then that entry refuses it.
    expect(asked.length === 1 || asked.length === 2, JSON.stringify(asked)).toBe(true);
    for (const q of asked) expect(q).toEqual({ allCues: true, allColumns: true });
    // After a change, the burst of reads that follows asks once again.
    const before = asked.length;
    await domain.cues.update(ctx, r.id, { id: r.cues[0]!, type: 'heading' });
    const after = await Promise.all(Array.from({ length: 8 }, () => cache.describe(ctx, r.id, query)));
    expect(after.map((layout) => layout.cues[0]?.type)).toEqual(Array.from({ length: 8 }, () => 'heading'));
    expect(asked).toHaveLength(before + 1);
  });

  it('another team, a token of another rundown, no team: rundowns.not_found, as the rundown service answers', async () => {
    const ctx = teamCaller();
    const r = await newRundown(ctx);
    const other = await newRundown(ctx);
    const cache = cacheOver(authoritative);
    const query = { cueIds: [r.cues[0]!], columnIds: [r.columns[0]!] };
    await cache.describe(ctx, r.id, query);
    expect(await problemOf(cache.describe(teamCaller(), r.id, query))).toBe('rundowns.not_found');
    expect(await problemOf(cache.describe({ ...ctx, tokenRundownId: other.id }, r.id, query))).toBe('rundowns.not_found');
    expect(await problemOf(cache.describe({ ...ctx, teamId: undefined }, r.id, query))).toBe('rundowns.not_found');
    expect((await cache.describe({ ...ctx, tokenRundownId: r.id }, r.id, query)).cues).toHaveLength(1);
  });

  it('an entry older than the max age is asked again, whatever the version says (a lost version write)', async () => {
    asked = [];
    const ctx = teamCaller();
    const r = await newRundown(ctx);
    const cache = cacheOver(authoritative, 200);
    await cache.describe(ctx, r.id, { cueIds: [r.cues[0]!] });
    await cache.describe(ctx, r.id, { cueIds: [r.cues[0]!] });
    expect(asked).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 250));
    await cache.describe(ctx, r.id, { cueIds: [r.cues[0]!] });
    expect(asked).toHaveLength(2);
  });

  it('without a version (Redis not answering), and for writes (`fresh`), the rundown service answers every time', async () => {
    asked = [];
    const ctx = teamCaller();
    const r = await newRundown(ctx);
    const down = new CachedCoordinates(authoritative, () => Promise.reject(new Error('Connection is closed.')), { maxAgeMs: 60_000, maxFacts: 10_000 });
    const query = { cueIds: [r.cues[0]!], columnIds: [r.columns[0]!] };
    await down.describe(ctx, r.id, query);
    await down.describe(ctx, r.id, query);
    const cache = cacheOver(authoritative);
    await cache.describe(ctx, r.id, { ...query, fresh: true });
    expect(asked).toEqual([query, query, { ...query, fresh: true }]);
  });
});
