import type { Database } from '@rundown/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { domainOf, newRundown, openDatabase } from './support.js';

// The rundown service's count caps (docs/api-decisions.md): 1,000 cues, 50 columns, 100 mentions and
// 100 text variables per rundown, counted by the domain under the rundown's lock wherever the write
// comes from (one create, a batch, the admin surface). Domain and repositories, real PostgreSQL.

let db: Database;
let domain: ReturnType<typeof domainOf>;

beforeAll(async () => {
  db = await openDatabase('caps');
  domain = domainOf(db);
});

afterAll(async () => {
  await db.destroy();
});

describe('count caps in the rundown service', () => {
  it('holds 1,000 cues, group children counted, and refuses one more wherever it comes from', async () => {
    const { ctx, id } = await newRundown(domain, 'Caps');
    const { result: g } = await domain.cues.create(ctx, id, { title: 'G', type: 'group' });
    await domain.cues.bulk(ctx, id, Array.from({ length: 500 }, (_, i) => ({ create: { title: `c${i}`, position: { kind: 'end' as const, group: g.id } } })));
    await domain.cues.bulk(ctx, id, Array.from({ length: 499 }, (_, i) => ({ create: { title: `r${i}` } })));
    const { rundown, cues } = await domain.cues.list(ctx, id);
    expect(cues).toHaveLength(1000);
    expect(rundown.cue_order).toHaveLength(500);
    expect(cues.filter((c) => c.parent_id === g.id)).toHaveLength(500);

    await expect(domain.cues.create(ctx, id, { title: 'too many' })).rejects.toMatchObject({ code: 'cues.too_many', details: { limit: 1000, received: 1001, unit: 'cues' } });
    const viaBulk = domain.cues.bulk(ctx, id, [{ patch: { id: g.id, title: 'G2' } }, { create: { title: 'x' } }, { create: { title: 'y' } }]);
    await expect(viaBulk).rejects.toMatchObject({ code: 'cues.too_many', details: { limit: 1000, received: 1002, unit: 'cues' } });
    expect((await domain.cues.get(ctx, id, g.id)).title).toBe('G');
    // Edits at the cap are fine, and a delete makes room for exactly one.
    await domain.cues.bulk(ctx, id, [{ patch: { id: g.id, title: 'G2' } }]);
    await domain.cues.delete(ctx, id, cues[1]!.id);
    await domain.cues.create(ctx, id, {});
    await expect(domain.cues.create(ctx, id, {})).rejects.toMatchObject({ code: 'cues.too_many' });
    expect((await domain.cues.list(ctx, id)).cues).toHaveLength(1000);
  });

  it('counts private columns: the 50th column is created, the 51st refused (columns.too_many), on the admin surface too', async () => {
    const { ctx, id } = await newRundown(domain, 'Caps', Array.from({ length: 44 }, (_, i) => `c${i}`));
    for (const name of ['p1', 'p2', 'p3']) await domain.columns.adminCreate(id, { name, type: 'text', private: true });
    await domain.columns.adminCreate(id, { name: 'select', type: 'select', private: false });
    await domain.columns.create(ctx, id, { name: 'c44' });
    const [first] = await domain.columns.list(ctx, id);
    const { result: fiftieth } = await domain.columns.create(ctx, id, { name: 'c45', before_column_id: first!.id });
    expect(fiftieth.name).toBe('c45');
    const [rows] = (await db.query('SELECT count(*)::int AS n FROM rundown.columns WHERE rundown_id = $1', [id])) as { n: number }[];
    const [order] = (await db.query('SELECT column_ids FROM rundown.rundowns WHERE id = $1', [id])) as { column_ids: string[] }[];
    expect(rows!.n).toBe(50);
    expect(order!.column_ids).toHaveLength(50);
    expect(order!.column_ids[0]).toBe(fiftieth.id);

    await expect(domain.columns.create(ctx, id, { name: 'c46' })).rejects.toMatchObject({ code: 'columns.too_many', details: { limit: 50, received: 51, unit: 'columns' } });
    await expect(domain.columns.adminCreate(id, { name: 'p4', type: 'text', private: true })).rejects.toMatchObject({
      code: 'columns.too_many',
      details: { limit: 50, received: 51, unit: 'columns' },
    });
    expect(await domain.columns.list(ctx, id)).toHaveLength(47);
  });

  it('reaches 100 mentions exactly and refuses the 101st on create and in a batch (mentions.too_many); updates still pass', async () => {
    const { ctx, id } = await newRundown(domain, 'Caps');
    const { result: filled } = await domain.mentions.bulk(ctx, id, Array.from({ length: 99 }, (_, i) => ({ fields: { name: `m${i}` } })));
    await domain.mentions.create(ctx, id, { name: 'm99' });
    await expect(domain.mentions.create(ctx, id, { name: 'm100' })).rejects.toMatchObject({ code: 'mentions.too_many', details: { rundown_id: id, max: 100 } });
    const existing = filled[0]!;
    await expect(domain.mentions.bulk(ctx, id, [{ id: existing.id, fields: { name: 'renamed' } }, { fields: { name: 'm100' } }])).rejects.toMatchObject({
      code: 'mentions.too_many',
      details: { rundown_id: id, max: 100 },
    });
    await domain.mentions.bulk(ctx, id, [{ id: existing.id, fields: { name: 'renamed' } }]);
    const list = await domain.mentions.list(ctx, id);
    expect(list).toHaveLength(100);
    expect(list.find((m) => m.id === existing.id)!.name).toBe('renamed');
  });

  it('reaches 100 text variables exactly and refuses more on create and in a batch (text_variables.too_many with attempted); replace counts the new set', async () => {
    const { ctx, id } = await newRundown(domain, 'Caps');
    const items = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => ({ key: `v${from + i}`, value: 'x' }));
    await domain.textVariables.bulk(ctx, id, items(0, 99), false);
    await domain.textVariables.create(ctx, id, { key: 'v99', value: 'x' });
    await expect(domain.textVariables.create(ctx, id, { key: 'v100', value: 'x' })).rejects.toMatchObject({ code: 'text_variables.too_many', details: { attempted: 101 } });
    await expect(domain.textVariables.bulk(ctx, id, [{ key: 'v0', value: 'changed' }, ...items(100, 103)], false)).rejects.toMatchObject({
      code: 'text_variables.too_many',
      details: { attempted: 103 },
    });
    // Updating existing keys of a full rundown is fine.
    await domain.textVariables.bulk(ctx, id, [{ key: 'v0', value: 'changed' }], false);
    // Replace counts only the new set: 100 passes, 101 does not.
    await domain.textVariables.bulk(ctx, id, items(200, 300), true);
    await expect(domain.textVariables.bulk(ctx, id, items(0, 101), true)).rejects.toMatchObject({ code: 'text_variables.too_many', details: { attempted: 101 } });
    const stored = Object.fromEntries((await domain.textVariables.list(ctx, id)).map((v) => [v.key, v.value]));
    expect(Object.keys(stored)).toHaveLength(100);
    expect(stored.v200).toBe('x');
    expect(stored.v0).toBeUndefined();
  });
});
