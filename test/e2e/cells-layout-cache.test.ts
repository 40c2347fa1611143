import { beforeAll, describe, expect, it } from 'vitest';
import { admin, createRundown, createTeam, v1 } from '../support/client.js';
import { expectProblem } from '../support/problems.js';

/**
 * The cells service answers reads from its layout cache (services/cells/README.md, "Layout
 * cache"). Each test first reads a cell (which fills the cache), then changes the layout through
 * the API, then reads or writes at once: the answer must already follow the change. Without the
 * rundown service's new layout version these reads would get the cached facts (for up to the
 * cache's max age, 5 s).
 */
let owner: string;
let editor: string;

beforeAll(async () => {
  const team = await createTeam();
  [owner, editor] = await Promise.all([team.token('OWNER'), team.token('EDIT')]);
});

/** A rundown with text columns A and B and two `cue`s, the first with a cell in A; the cache warm. */
async function warm() {
  const created = await createRundown(owner, {
    title: 'Layout cache',
    columns: [{ name: 'A' }, { name: 'B' }],
    cues: [
      { type: 'cue', title: 'one', cells: { A: 'kept' } },
      { type: 'cue', title: 'two' },
    ],
  });
  const cues = (await v1('GET', `/rundowns/${created.id}/cues`, { token: owner })).body.data.items.map((c: { id: string }) => c.id) as string[];
  const r = { id: created.id as string, cues, columns: created.column_order as string[] };
  const first = await read(r.id, cues[0]!, r.columns[0]!);
  expect(first.status, first.text).toBe(200);
  expect(first.body.data.content).toBe('kept');
  return r;
}

const read = (rundownId: string, cue_id: string, column_id: string) => v1('GET', `/rundowns/${rundownId}/cells`, { token: editor, query: { cue_id, column_id } });
const readAll = (rundownId: string) => v1('GET', `/rundowns/${rundownId}/cells`, { token: editor });
const patch = (rundownId: string, body: unknown) => v1('PATCH', `/rundowns/${rundownId}/cells`, { token: editor, body });

describe('cell reads after a layout change', () => {
  it('a cue converted to a heading reads empty at once, and its cell again once it is a cue', async () => {
    const r = await warm();
    expect((await v1('PATCH', `/rundowns/${r.id}/cues/${r.cues[0]}`, { token: editor, body: { type: 'heading' } })).status).toBe(200);
    expect((await read(r.id, r.cues[0]!, r.columns[0]!)).body.data).toMatchObject({ content: '', created_at: null });
    expect((await readAll(r.id)).body.data.items).toHaveLength(0);
    expect((await v1('POST', `/rundowns/${r.id}/cues:bulk`, { token: editor, body: { items: [{ id: r.cues[0], type: 'cue' }] } })).status).toBe(200);
    expect((await read(r.id, r.cues[0]!, r.columns[0]!)).body.data.content).toBe('kept');
  });

  it('a deleted cue is cues.not_found at once; a new cue is readable at once', async () => {
    const r = await warm();
    expect((await v1('DELETE', `/rundowns/${r.id}/cues/${r.cues[0]}`, { token: owner })).status).toBe(204);
    expectProblem(await read(r.id, r.cues[0]!, r.columns[0]!), 404, 'cues.not_found');
    const added = await v1('POST', `/rundowns/${r.id}/cues`, { token: editor, body: { title: 'new' } });
    expect(added.status, added.text).toBe(201);
    const fresh = await read(r.id, added.body.data.id, r.columns[0]!);
    expect(fresh.status, fresh.text).toBe(200);
    expect(fresh.body.data).toMatchObject({ cue_id: added.body.data.id, content: '' });
  });

  it('a deleted column is columns.not_found at once; a new column is readable at once', async () => {
    const r = await warm();
    expect((await v1('DELETE', `/rundowns/${r.id}/columns/${r.columns[0]}`, { token: owner })).status).toBe(204);
    expectProblem(await read(r.id, r.cues[0]!, r.columns[0]!), 404, 'columns.not_found');
    const added = await v1('POST', `/rundowns/${r.id}/columns`, { token: owner, body: { name: 'C' } });
    expect(added.status, added.text).toBe(201);
    expect((await read(r.id, r.cues[0]!, added.body.data.id)).status).toBe(200);
  });

  it('a deleted rundown is rundowns.not_found at once', async () => {
    const r = await warm();
    expect((await v1('DELETE', `/rundowns/${r.id}`, { token: owner })).status).toBe(204);
    expectProblem(await read(r.id, r.cues[0]!, r.columns[0]!), 404, 'rundowns.not_found');
  });

  it('a cue locked on the admin surface refuses the next write, and takes it once unlocked', async () => {
    const r = await warm();
    expect((await admin('PATCH', `/rundowns/${r.id}/cues/${r.cues[1]}`, { prevent_edits: true })).status).toBe(200);
    expectProblem(await patch(r.id, { cue_id: r.cues[1], column_id: r.columns[0], content: 'no' }), 409, 'cells.prevent_edits');
    expect((await admin('PATCH', `/rundowns/${r.id}/cues/${r.cues[1]}`, { prevent_edits: false })).status).toBe(200);
    expect((await patch(r.id, { cue_id: r.cues[1], column_id: r.columns[0], content: 'yes' })).status).toBe(200);
    expect((await read(r.id, r.cues[1]!, r.columns[0]!)).body.data.content).toBe('yes');
  });

  it('another team still gets rundowns.not_found for a rundown in the cache', async () => {
    const r = await warm();
    const stranger = await (await createTeam()).token('OWNER');
    expectProblem(await v1('GET', `/rundowns/${r.id}/cells`, { token: stranger, query: { cue_id: r.cues[0]!, column_id: r.columns[0]! } }), 404, 'rundowns.not_found');
  });
});
