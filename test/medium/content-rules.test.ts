import type { Database } from '@rundown/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { domainOf, newRundown, openDatabase } from './support.js';

// Rules of a rundown's mentions and text variables that the rundown service decides against what is
// stored: names unique in the rundown, a batch that repeats an id or a key, a key that exists already.
// Domain and repositories, real PostgreSQL.

let db: Database;
let domain: ReturnType<typeof domainOf>;

beforeAll(async () => {
  db = await openDatabase('content_rules');
  domain = domainOf(db);
});

afterAll(async () => {
  await db.destroy();
});

describe('mentions', () => {
  it('refuses a name already in the rundown (mentions.name_conflict) on create, update and in a batch, writing nothing', async () => {
    const { ctx, id } = await newRundown(domain, 'Content');
    const { result: anna } = await domain.mentions.create(ctx, id, { name: 'Anna' });
    await domain.mentions.create(ctx, id, { name: 'Ben' });
    await expect(domain.mentions.create(ctx, id, { name: 'Ben' })).rejects.toMatchObject({ code: 'mentions.name_conflict', details: { rundown_id: id, name: 'Ben' } });
    await expect(domain.mentions.update(ctx, id, anna.id, { name: 'Ben' })).rejects.toMatchObject({ code: 'mentions.name_conflict', details: { rundown_id: id, name: 'Ben' } });
    await expect(domain.mentions.bulk(ctx, id, [{ fields: { name: 'Cleo' } }, { fields: { name: 'Cleo' } }])).rejects.toMatchObject({
      code: 'mentions.name_conflict',
      details: { rundown_id: id, name: 'Cleo' },
    });
    expect((await domain.mentions.list(ctx, id)).map((m) => m.name)).toEqual(['Anna', 'Ben']);
  });

  it('refuses a batch that repeats an id (mentions.duplicate_id with every index), writing nothing', async () => {
    const { ctx, id } = await newRundown(domain, 'Content');
    const { result: first } = await domain.mentions.create(ctx, id, { name: 'Anna' });
    const { result: second } = await domain.mentions.create(ctx, id, { name: 'Ben' });
    const batch = [
      { id: first.id, fields: { name: 'a' } },
      { id: second.id, fields: { name: 'b' } },
      { fields: { name: 'c' } },
      { id: first.id, fields: { name: 'd' } },
      { id: second.id, fields: { name: 'e' } },
      { id: first.id, fields: { name: 'f' } },
    ];
    await expect(domain.mentions.bulk(ctx, id, batch)).rejects.toMatchObject({
      code: 'mentions.duplicate_id',
      details: {
        duplicates: [
          { id: first.id, indexes: [0, 3, 5] },
          { id: second.id, indexes: [1, 4] },
        ],
      },
    });
    expect((await domain.mentions.list(ctx, id)).map((m) => m.name)).toEqual(['Anna', 'Ben']);
  });
});

describe('text variables', () => {
  it('refuses to create an existing key, pointing to PATCH (text_variables.key_exists)', async () => {
    const { ctx, id } = await newRundown(domain, 'Content');
    await domain.textVariables.create(ctx, id, { key: 'host_name', value: 'Anna' });
    const refused = (await domain.textVariables.create(ctx, id, { key: 'host_name', value: 'x' }).catch((e: unknown) => e)) as { code: string; detail: string };
    expect(refused.code).toBe('text_variables.key_exists');
    expect(refused.detail).toMatch(/PATCH/);
    expect((await domain.textVariables.get(ctx, id, 'host_name')).value).toBe('Anna');
  });

  it('refuses a batch that repeats a key (text_variables.duplicate_key, each key once), merge or replace, writing nothing', async () => {
    const { ctx, id } = await newRundown(domain, 'Content');
    await domain.textVariables.create(ctx, id, { key: 'show', value: 'News' });
    const batch = [
      { key: 'a', value: '1' },
      { key: 'b', value: '2' },
      { key: 'a', value: '3' },
      { key: 'b', value: '4' },
    ];
    for (const replace of [false, true]) {
      await expect(domain.textVariables.bulk(ctx, id, batch, replace)).rejects.toMatchObject({ code: 'text_variables.duplicate_key', details: { duplicates: ['a', 'b'] } });
    }
    expect((await domain.textVariables.list(ctx, id)).map((v) => [v.key, v.value])).toEqual([['show', 'News']]);
  });
});
