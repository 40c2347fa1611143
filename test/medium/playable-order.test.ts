import type { Database } from '@rundown/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlayableOrder } from '../../services/rundown/src/domain/playable-order.js';
import { domainOf, emptyRundown, openDatabase, teamCaller } from './support.js';

let db: Database;
let domain: ReturnType<typeof domainOf>;

beforeAll(async () => {
  db = await openDatabase('playable-order');
  domain = domainOf(db);
});

afterAll(async () => {
  await db.destroy();
});

/** The full order (asked without a version). */
async function full(rundownId: string): Promise<PlayableOrder> {
  const order = await domain.playableOrder.get(rundownId);
  if ('not_modified' in order) throw new Error('asked without a version, answered not_modified');
  return order;
}

describe('the playable order and its version (what the runner asks before each transition)', () => {
  it('answers not_modified to the current version, and the full order, with a new version, after each change to it', async () => {
    const ctx = teamCaller();
    const { result: rd } = await domain.rundowns.create(ctx, { ...emptyRundown, title: 'Show', cues: [{ fields: { title: 'A', duration_ms: 1000 }, cells: [], children: [] }] });
    let held = await full(rd.id);
    expect(held.cues.map((c) => c.title)).toEqual(['A']);
    expect(await domain.playableOrder.get(rd.id, held.version)).toEqual({ rundown_id: rd.id, team_id: ctx.teamId, version: held.version, not_modified: true });

    // Each write below changes what the runner reads; a stale version must never be answered not_modified.
    const [a] = held.cues;
    const changes: [string, () => Promise<unknown>, (o: PlayableOrder) => void][] = [
      ['a cue created', () => domain.cues.create(ctx, rd.id, { title: 'B', duration_ms: 2000 }), (o) => expect(o.cues.map((c) => c.title)).toEqual(['A', 'B'])],
      ['a cue retitled', () => domain.cues.update(ctx, rd.id, { id: a!.id, title: 'A2' }), (o) => expect(o.cues[0]!.title).toBe('A2')],
      ['auto_advance set', () => domain.cues.update(ctx, rd.id, { id: a!.id, auto_advance: true }), (o) => expect(o.cues[0]!.auto_advance).toBe(true)],
      ['a cue skipped', () => domain.cues.update(ctx, rd.id, { id: a!.id, skip: true }), (o) => expect(o.cues[0]!.skip).toBe(true)],
      [
        'the cues reordered',
        async () => {
          const ids = (await full(rd.id)).cues.map((c) => c.id);
          await domain.cues.reorder(ctx, rd.id, ids.reverse().map((id) => ({ id, parent_id: null })));
        },
        (o) => expect(o.cues.map((c) => c.title)).toEqual(['B', 'A2']),
      ],
      ['a cue locked (admin)', () => domain.cues.setPreventEdits(rd.id, a!.id, true), (o) => expect(o.cues.find((c) => c.id === a!.id)!.prevent_edits).toBe(true)],
      ['the planned start set', () => domain.rundowns.update(ctx, rd.id, { start_time: 1_764_000_000_000 }), (o) => expect(o.start_time).toBe(1_764_000_000_000)],
      ['the timezone set', () => domain.rundowns.update(ctx, rd.id, { timezone: 'Europe/Paris' }), (o) => expect(o.timezone).toBe('Europe/Paris')],
      [
        'a cue deleted',
        async () => domain.cues.delete(ctx, rd.id, (await full(rd.id)).cues.find((c) => c.title === 'B')!.id),
        (o) => expect(o.cues.map((c) => c.title)).toEqual(['A2']),
      ],
    ];
    for (const [what, change, check] of changes) {
      await change();
      const answer = await domain.playableOrder.get(rd.id, held.version);
      expect('not_modified' in answer, what).toBe(false);
      const order = answer as PlayableOrder;
      expect(order.version, what).toBeGreaterThan(held.version);
      check(order);
      expect(order, what).toEqual(await full(rd.id));
      held = order;
    }

    // What the order does not hold leaves its version alone: the runner keeps its copy.
    await domain.rundowns.update(ctx, rd.id, { title: 'Show 2' });
    await domain.columns.create(ctx, rd.id, { name: 'Notes' });
    expect(await domain.playableOrder.get(rd.id, held.version)).toMatchObject({ not_modified: true, version: held.version });

    // A deleted rundown is not found, whatever version is asked for.
    await domain.rundowns.delete(ctx, rd.id);
    await expect(domain.playableOrder.get(rd.id, held.version)).rejects.toMatchObject({ code: 'rundowns.not_found' });
    await expect(domain.playableOrder.get(rd.id)).rejects.toMatchObject({ code: 'rundowns.not_found' });
  });

  it('moves the version of each rundown a write touches, never another one', async () => {
    const ctx = teamCaller();
    const { result: one } = await domain.rundowns.create(ctx, { ...emptyRundown, title: 'one' });
    const { result: two } = await domain.rundowns.create(ctx, { ...emptyRundown, title: 'two' });
    const [v1, v2] = [(await full(one.id)).version, (await full(two.id)).version];
    await domain.cues.create(ctx, one.id, { title: 'X' });
    expect(await domain.playableOrder.get(two.id, v2)).toMatchObject({ not_modified: true });
    expect(await domain.playableOrder.get(one.id, v1)).not.toHaveProperty('not_modified');
  });

  it('answers not_found to an id that is no rundown (with or without a version)', async () => {
    await expect(domain.playableOrder.get('rd_doesnotexist', 1)).rejects.toMatchObject({ code: 'rundowns.not_found' });
    await expect(domain.playableOrder.get('not an id\u0000', 1)).rejects.toMatchObject({ code: 'rundowns.not_found' });
  });
});
