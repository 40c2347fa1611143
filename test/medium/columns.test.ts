import type { Database } from '@rundown/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noCellsYet } from '../../services/rundown/src/domain/cells-port.js';
import { domainOf, emptyRundown, openDatabase, teamCaller } from './support.js';

/** Column rules as the domain owns them, over the real repositories and PostgreSQL. */
let db: Database;
let domain: ReturnType<typeof domainOf>;
const removed: string[] = [];

beforeAll(async () => {
  db = await openDatabase('columns');
  // The cells context reports how many cells a deleted column had.
  domain = domainOf(db, {
    ...noCellsYet,
    deleteColumnCells: async (_rundownId, columnId) => {
      removed.push(columnId);
      return 3;
    },
  });
});

afterAll(async () => {
  await db.destroy();
});

async function newRundown(columns: string[]) {
  const caller = teamCaller();
  const { result } = await domain.rundowns.create(caller, { ...emptyRundown, title: 'Columns', columns: columns.map((name) => ({ name })) });
  return { caller, rundown: result };
}

describe('columns (domain + repositories, real PostgreSQL)', () => {
  it('keeps names unique among all columns, private ones included, as a catalogue error', async () => {
    const { caller, rundown } = await newRundown(['A']);
    await domain.columns.adminCreate(rundown.id, { name: 'Secret', type: 'text', private: true });
    await expect(domain.columns.create(caller, rundown.id, { name: 'Secret' })).rejects.toMatchObject({
      code: 'columns.invalid_payload',
      details: { issues: [{ path: ['name'], code: 'custom' }] },
    });
    const [a] = await domain.columns.list(caller, rundown.id);
    await expect(domain.columns.update(caller, rundown.id, a!.id, { name: 'Secret' })).rejects.toMatchObject({ code: 'columns.invalid_payload' });
    // A rename to its own name is no change, not a clash.
    await expect(domain.columns.update(caller, rundown.id, a!.id, { name: 'A' })).resolves.toMatchObject({ result: { name: 'A' }, side_effects: [] });
  });

  it('answers columns.empty_patch for a PATCH without a name, before looking anything up', async () => {
    await expect(domain.columns.update(teamCaller(), 'rd_missing', 'col_missing', { before_column_id: 'x' })).rejects.toMatchObject({
      code: 'columns.empty_patch',
    });
  });

  it('decides the side effects: the new public order when it moved, column.deleted with the cells removed', async () => {
    const { caller, rundown } = await newRundown(['A', 'B']);
    const [a, b] = await domain.columns.list(caller, rundown.id);
    const created = await domain.columns.create(caller, rundown.id, { name: 'C', before_column_id: b!.id });
    expect(created.side_effects).toEqual([{ type: 'rundown.changed', rundown_id: rundown.id, column_order: [a!.id, created.result.id, b!.id] }]);

    // A private column keeps its slot and is never named in an effect.
    const hidden = await domain.columns.adminCreate(rundown.id, { name: 'Hidden', type: 'image', private: true });
    expect(hidden.side_effects).toEqual([]);

    const same = await domain.columns.reorder(caller, rundown.id, [a!.id, created.result.id, b!.id]);
    expect(same.side_effects).toEqual([]);
    const moved = await domain.columns.reorder(caller, rundown.id, [b!.id, a!.id, created.result.id]);
    expect(moved.side_effects).toEqual([{ type: 'rundown.changed', rundown_id: rundown.id, column_order: [b!.id, a!.id, created.result.id] }]);
    const [row] = (await db.query('SELECT column_ids FROM rundown.rundowns WHERE id = $1', [rundown.id])) as { column_ids: string[] }[];
    expect(row!.column_ids).toEqual([b!.id, a!.id, created.result.id, hidden.result.id]);

    const deleted = await domain.columns.delete(caller, rundown.id, a!.id);
    expect(deleted.side_effects).toEqual([
      { type: 'column.deleted', rundown_id: rundown.id, column_id: a!.id, cell_count: 3 },
      { type: 'rundown.changed', rundown_id: rundown.id, column_order: [b!.id, created.result.id] },
    ]);
    expect(removed).toContain(a!.id);
    await expect(domain.columns.get(caller, rundown.id, a!.id)).rejects.toMatchObject({ code: 'columns.not_found' });
  });
});
