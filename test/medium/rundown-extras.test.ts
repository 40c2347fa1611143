import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallerContext, Database } from '@rundown/shared';
import { domainOf, emptyRundown, openDatabase, teamCaller } from './support.js';

// A create that brings mentions, text variables and an output message (an import, docs/import-export.md), and
// the export's one-snapshot read of all of it: domain and repositories against real PostgreSQL.

let db: Database;
let domain: ReturnType<typeof domainOf>;

beforeAll(async () => {
  db = await openDatabase('rundown_extras');
  domain = domainOf(db);
});

afterAll(async () => {
  await db.destroy();
});

const extras = {
  mentions: [{ id: 'mnt_a1b2c3d4e5f6a7b8', name: 'Anna', color: '#d29922', description: 'anchor' }],
  text_variables: [{ key: 'guest', value: 'Dr. Jane Doe' }],
  output_message: { text: 'Stand by', visible: true, color: '#cf222e', bold: true, underline: false },
};

describe('a create with mentions, variables and a message', () => {
  it('makes them in the create’s transaction, and the export reads them with the rest', async () => {
    const ctx: CallerContext = teamCaller();
    const { result } = await domain.rundowns.create(ctx, { ...emptyRundown, title: 'Imported', columns: [{ name: 'Script' }], cues: [{ fields: { title: 'One' }, cells: [], children: [] }], extras });
    const read = await domain.coordinates.export(ctx, result.id);
    expect(read.rundown.id).toBe(result.id);
    expect(read.columns.map((c) => c.name)).toEqual(['Script']);
    expect(read.cues.map((c) => c.title)).toEqual(['One']);
    expect(read.mentions).toMatchObject([{ id: extras.mentions[0]!.id, name: 'Anna', color: '#d29922', description: 'anchor' }]);
    expect(read.text_variables).toMatchObject([{ key: 'guest', value: 'Dr. Jane Doe' }]);
    expect(read.output_message).toMatchObject({ ...extras.output_message });
  });

  it('refuses what their own writes refuse, with the same codes or issues, and makes nothing', async () => {
    const ctx: CallerContext = teamCaller();
    const create = (more: Partial<typeof extras>) => domain.rundowns.create(ctx, { ...emptyRundown, title: 'Refused', extras: { ...extras, ...more } });
    await expect(create({ mentions: Array.from({ length: 101 }, (_, i) => ({ ...extras.mentions[0]!, id: `mnt_${String(i).padStart(16, '0')}`, name: `M${i}` })) })).rejects.toMatchObject({ code: 'mentions.too_many' });
    await expect(create({ text_variables: Array.from({ length: 101 }, (_, i) => ({ key: `k${i}`, value: '' })) })).rejects.toMatchObject({ code: 'text_variables.too_many' });
    await expect(create({ mentions: [extras.mentions[0]!, { ...extras.mentions[0]!, id: 'mnt_b1b2c3d4e5f6a7b8' }], text_variables: [{ key: 'bad key', value: '' }] })).rejects.toMatchObject({
      code: 'rundowns.invalid_payload',
      details: { issues: [{ path: ['mentions', 1, 'name'] }, { path: ['text_variables', 0, 'key'] }] },
    });
    await expect(create({ output_message: { ...extras.output_message, color: 'red' } })).rejects.toMatchObject({ details: { issues: [{ path: ['output_message', 'color'] }] } });
    expect((await domain.rundowns.list(ctx, 100, undefined)).items).toEqual([]);
  });
});
