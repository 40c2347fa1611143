import { beforeAll, describe, expect, it } from 'vitest';
import { adminCli } from '../support/cli.js';
import { admin, createRundown, createTeam, system, type TestTeam, v1 } from '../support/client.js';
import { expectCueInvariants, listCues } from '../support/cues.js';
import { expectProblem } from '../support/problems.js';

let team: TestTeam;
let owner: string;
let editor: string;
let viewer: string;

beforeAll(async () => {
  team = await createTeam();
  [owner, editor, viewer] = await Promise.all([team.token('OWNER'), team.token('EDIT'), team.token('VIEW')]);
});

async function newRundown(body: Record<string, unknown> = {}): Promise<string> {
  return (await createRundown(editor, { title: 'Cues', ...body })).id as string;
}

async function createCue(rundownId: string, body: Record<string, unknown>) {
  const res = await v1('POST', `/rundowns/${rundownId}/cues`, { token: editor, body });
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

async function bulk(rundownId: string, items: Record<string, unknown>[]) {
  return v1('POST', `/rundowns/${rundownId}/cues:bulk`, { token: editor, body: { items } });
}

/** The display order by title, children as `group/child`. */
async function titles(rundownId: string): Promise<string[]> {
  const items = await list(rundownId);
  const byId = new Map(items.map((c) => [c.id, c.title]));
  return items.map((c) => (c.parent_id ? `${byId.get(c.parent_id)}/${c.title}` : c.title));
}

const list = (rundownId: string) => listCues(viewer, rundownId);
const expectOrderAgrees = (rundownId: string) => expectCueInvariants(viewer, rundownId);

describe('create, read and list', () => {
  it('creates at the end by default and at every position form, listing a group then its children', async () => {
    const id = await newRundown();
    const first = await v1('POST', `/rundowns/${id}/cues`, { token: editor, body: { title: 'A' } });
    expect(first.status).toBe(201);
    expect(first.headers.get('location')).toBe(`${system().baseUrl}/rundowns/${id}/cues/${first.body.data.id}`);
    expect(first.body.meta.side_effects).toEqual([{ type: 'rundown.changed', rundown_id: id, changed: ['cue_order'] }]);
    const a = first.body.data;
    expect(a).toEqual({
      id: expect.stringMatching(/^cue_/),
      type: 'cue',
      title: 'A',
      subtitle: '',
      duration_ms: 0,
      background_color: null,
      start_time: null,
      prevent_edits: false,
      skip: false,
      skipped_by: null,
      parent_id: null,
      auto_advance: false,
      scheduled: false,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const g = await createCue(id, { title: 'G', type: 'group' });
    await createCue(id, { title: 'Start', position: { start: true } });
    await createCue(id, { title: 'End', position: { end: true } });
    await createCue(id, { title: 'G-last', position: { end: g.id } });
    const gFirst = await createCue(id, { title: 'G-first', type: 'heading', position: { start: g.id } });
    expect(gFirst.parent_id).toBe(g.id);
    await createCue(id, { title: 'Before-A', position: { before_cue_id: a.id } });
    await createCue(id, { title: 'After-G-first', position: { after_cue_id: gFirst.id } });
    await createCue(id, { title: 'Before-G-first', position: { before_cue_id: gFirst.id } });
    const groupAfterGroup = await createCue(id, { title: 'G2', type: 'group', position: { after_cue_id: g.id } });
    expect(groupAfterGroup.parent_id).toBeNull();
    expect(await titles(id)).toEqual([
      'Start',
      'Before-A',
      'A',
      'G',
      'G/Before-G-first',
      'G/G-first',
      'G/After-G-first',
      'G/G-last',
      'G2',
      'End',
    ]);
    const { rundown } = await expectOrderAgrees(id);
    expect(rundown.cue_order.find((n: { id: string }) => n.id === g.id).children).toHaveLength(4);
    expect(rundown.cue_order.find((n: { id: string }) => n.id === groupAfterGroup.id).children).toBeUndefined();
  });

  it('creates a default cue from a bodyless POST', async () => {
    const id = await newRundown();
    const res = await v1('POST', `/rundowns/${id}/cues`, { token: editor });
    expect(res.status, res.text).toBe(201);
    expect(res.body.data).toMatchObject({ type: 'cue', title: '', duration_ms: 0, parent_id: null });
  });

  it('reads one cue, lists every cue with next_cursor null, and side-loads cues on the rundown', async () => {
    const id = await newRundown();
    const a = await createCue(id, { title: 'A', duration_ms: 1000 });
    const got = await v1('GET', `/rundowns/${id}/cues/${a.id}`, { token: viewer });
    expect(got.status).toBe(200);
    expect(got.body.data).toEqual(a);
    const listed = await v1('GET', `/rundowns/${id}/cues`, { token: viewer });
    expect(listed.body.data).toEqual({ items: [a], next_cursor: null });
    expect(listed.body.meta.side_effects).toEqual([]);
    const withCues = await v1('GET', `/rundowns/${id}`, { token: viewer, query: { include: 'cues' } });
    expect(withCues.status).toBe(200);
    expect(withCues.body.included).toEqual({ cues: [a] });
    expect(withCues.body.data.cue_order).toEqual([{ id: a.id }]);
    const plain = await v1('GET', `/rundowns/${id}`, { token: viewer });
    expect(plain.body.included).toBeUndefined();
    expectProblem(await v1('GET', `/rundowns/${id}`, { token: viewer, query: { include: 'bogus' } }), 400, 'bad_request');
  });

  it('answers a missing cue and a missing or foreign rundown with their not-found codes', async () => {
    const id = await newRundown();
    const missing = await v1('GET', `/rundowns/${id}/cues/cue_nope`, { token: viewer });
    expectProblem(missing, 404, 'cues.not_found');
    expect(missing.body.details).toEqual({ rundown_id: id, cue_id: 'cue_nope' });
    for (const [method, path] of [
      ['PATCH', `/rundowns/${id}/cues/cue_nope`],
      ['DELETE', `/rundowns/${id}/cues/cue_nope`],
    ] as const) {
      const res = await v1(method, path, { token: owner, ...(method === 'PATCH' ? { body: { title: 'x' } } : {}) });
      expectProblem(res, 404, 'cues.not_found');
      expect(res.body.details).toEqual({ rundown_id: id, cue_id: 'cue_nope' });
    }
    expectProblem(await v1('GET', '/rundowns/rd_nope/cues', { token: viewer }), 404, 'rundowns.not_found');
    const other = await createTeam();
    const stranger = await other.token('OWNER');
    expectProblem(await v1('GET', `/rundowns/${id}/cues`, { token: stranger }), 404, 'rundowns.not_found');
    expectProblem(await v1('POST', `/rundowns/${id}/cues`, { token: stranger, body: {} }), 404, 'rundowns.not_found');
    const elsewhere = await newRundown();
    const scoped = await team.token('EDIT', { rundown_id: elsewhere });
    expectProblem(await v1('GET', `/rundowns/${id}/cues`, { token: scoped }), 404, 'rundowns.not_found');
    expect((await v1('POST', `/rundowns/${elsewhere}/cues`, { token: scoped, body: {} })).status).toBe(201);
  });

  it('lets VIEW read but not write, EDIT write but not delete, OWNER delete', async () => {
    const id = await newRundown();
    const a = await createCue(id, { title: 'A' });
    expectProblem(await v1('POST', `/rundowns/${id}/cues`, { token: viewer, body: {} }), 403, 'forbidden');
    expectProblem(await v1('PATCH', `/rundowns/${id}/cues/${a.id}`, { token: viewer, body: { title: 'x' } }), 403, 'forbidden');
    expectProblem(await v1('POST', `/rundowns/${id}/cues:bulk`, { token: viewer, body: { items: [] } }), 403, 'forbidden');
    expectProblem(await v1('POST', `/rundowns/${id}/cues:reorder`, { token: viewer, body: { items: [] } }), 403, 'forbidden');
    expectProblem(await v1('DELETE', `/rundowns/${id}/cues/${a.id}`, { token: editor }), 403, 'forbidden');
    const deleted = await v1('DELETE', `/rundowns/${id}/cues/${a.id}`, { token: owner });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expectProblem(await v1('GET', `/rundowns/${id}/cues/${a.id}`, { token: viewer }), 404, 'cues.not_found');
    expect(await list(id)).toEqual([]);
  });
});

describe('validation', () => {
  it('refuses bad fields with cues.invalid_payload and one issue per field', async () => {
    const id = await newRundown();
    const res = await v1('POST', `/rundowns/${id}/cues`, {
      token: editor,
      body: {
        type: 'segment',
        title: 'x'.repeat(501),
        subtitle: 'y'.repeat(1001),
        duration_ms: -1,
        background_color: 'red',
        start_time: 'yesterday',
        skip: 'yes',
        prevent_edits: true,
      },
    });
    expectProblem(res, 400, 'cues.invalid_payload');
    const paths = (res.body.details.issues as { path: unknown[] }[]).map((i) => i.path.join('.'));
    expect(paths).toEqual(
      expect.arrayContaining(['type', 'title', 'subtitle', 'duration_ms', 'background_color', 'start_time', 'skip', '']),
    );
    for (const issue of res.body.details.issues) expect(issue).toEqual({ path: expect.any(Array), message: expect.any(String), code: expect.any(String) });
    for (const body of [{ duration_ms: 1.5 }, { duration_ms: 604_800_001 }, { background_color: '#abcd' }]) {
      expectProblem(await v1('POST', `/rundowns/${id}/cues`, { token: editor, body }), 400, 'cues.invalid_payload');
    }
    // The limits themselves are fine.
    const edge = await createCue(id, { title: 'x'.repeat(500), subtitle: 'y'.repeat(1000), duration_ms: 604_800_000, background_color: '#AbC' });
    expect(edge.duration_ms).toBe(604_800_000);
  });

  it('refuses a malformed position descriptor with cues.invalid_payload', async () => {
    const id = await newRundown();
    const a = await createCue(id, { title: 'A' });
    for (const position of [{}, { start: true, end: true }, { before_cue_id: a.id, after_cue_id: a.id }, { start: false }, { end: 3 }, { before_cue_id: 7 }, { middle: true }, 'end']) {
      const res = await v1('POST', `/rundowns/${id}/cues`, { token: editor, body: { position } });
      expectProblem(res, 400, 'cues.invalid_payload');
      expect(res.body.details.issues[0].path[0]).toBe('position');
      expectProblem(await v1('PATCH', `/rundowns/${id}/cues/${a.id}`, { token: editor, body: { position } }), 400, 'cues.invalid_payload');
    }
  });

  it('refuses impossible positions: a group into a group, a target that is not a group, a missing target', async () => {
    const id = await newRundown();
    const g = await createCue(id, { title: 'G', type: 'group' });
    const child = await createCue(id, { title: 'C', position: { end: g.id } });
    const h = await createCue(id, { title: 'H', type: 'heading' });
    expectProblem(await v1('POST', `/rundowns/${id}/cues`, { token: editor, body: { type: 'group', position: { end: g.id } } }), 422, 'cues.invalid_position');
    expectProblem(
      await v1('POST', `/rundowns/${id}/cues`, { token: editor, body: { type: 'group', position: { after_cue_id: child.id } } }),
      422,
      'cues.invalid_position',
    );
    expectProblem(await v1('POST', `/rundowns/${id}/cues`, { token: editor, body: { position: { start: h.id } } }), 422, 'cues.invalid_position');
    expectProblem(await v1('PATCH', `/rundowns/${id}/cues/${g.id}`, { token: editor, body: { position: { after_cue_id: child.id } } }), 422, 'cues.invalid_position');
    for (const position of [{ before_cue_id: 'cue_gone' }, { after_cue_id: 'cue_gone' }, { start: 'cue_gone' }, { end: 'cue_gone' }]) {
      const res = await v1('POST', `/rundowns/${id}/cues`, { token: editor, body: { position } });
      expectProblem(res, 422, 'cues.position_target_not_found');
      expect(res.body.details).toEqual({ cue_id: 'cue_gone' });
    }
    expect(await titles(id)).toEqual(['G', 'G/C', 'H']);
  });

  it('refuses an empty PATCH with cues.empty_patch, and a scheduled cue without start_time', async () => {
    const id = await newRundown();
    const a = await createCue(id, { title: 'A' });
    expectProblem(await v1('PATCH', `/rundowns/${id}/cues/${a.id}`, { token: editor, body: {} }), 422, 'cues.empty_patch');
    const scheduled = await v1('PATCH', `/rundowns/${id}/cues/${a.id}`, { token: editor, body: { scheduled: true } });
    expectProblem(scheduled, 400, 'cues.invalid_payload');
    expect(scheduled.body.details.issues).toEqual([{ path: ['scheduled'], message: expect.any(String), code: 'custom' }]);
    expectProblem(await v1('POST', `/rundowns/${id}/cues`, { token: editor, body: { scheduled: true } }), 400, 'cues.invalid_payload');
  });
});

describe('patch', () => {
  it('changes every field, keeps end_time = start_time + playable durations, and reports what changed', async () => {
    const start = Date.parse('2026-01-01T20:00:00Z');
    const id = await newRundown({ start_time: start });
    const a = await createCue(id, { title: 'A', duration_ms: 1000 });
    const g = await createCue(id, { title: 'G', type: 'group', duration_ms: 99_999 });
    const c = await createCue(id, { title: 'C', duration_ms: 500, position: { end: g.id } });
    const h = await createCue(id, { title: 'H', type: 'heading', duration_ms: 7_000 });
    const endTime = async () => (await v1('GET', `/rundowns/${id}`, { token: viewer })).body.data.end_time;
    expect(await endTime()).toBe(start + 1500);

    const patched = await v1('PATCH', `/rundowns/${id}/cues/${a.id}`, {
      token: editor,
      body: {
        title: 'A2',
        subtitle: 'sub',
        duration_ms: 2000,
        background_color: '#ff0000',
        start_time: '2026-01-01T20:05:00Z',
        auto_advance: true,
        scheduled: true,
      },
    });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.data).toMatchObject({
      title: 'A2',
      subtitle: 'sub',
      duration_ms: 2000,
      background_color: '#ff0000',
      start_time: Date.parse('2026-01-01T20:05:00Z'),
      auto_advance: true,
      scheduled: true,
    });
    expect(patched.body.data.updated_at >= a.updated_at).toBe(true);
    expect(patched.body.meta.side_effects).toEqual([{ type: 'rundown.changed', rundown_id: id, changed: ['end_time'] }]);
    expect(await endTime()).toBe(start + 2500);

    // Clearing start_time of a scheduled cue would break "scheduled needs start_time".
    expectProblem(await v1('PATCH', `/rundowns/${id}/cues/${a.id}`, { token: editor, body: { start_time: null } }), 400, 'cues.invalid_payload');
    const cleared = await v1('PATCH', `/rundowns/${id}/cues/${a.id}`, {
      token: editor,
      body: { background_color: null, start_time: null, scheduled: false },
    });
    expect(cleared.body.data).toMatchObject({ background_color: null, start_time: null, scheduled: false });
    expect(cleared.body.meta.side_effects).toEqual([]);
    const epoch = await v1('PATCH', `/rundowns/${id}/cues/${a.id}`, { token: editor, body: { start_time: start } });
    expect(epoch.body.data.start_time).toBe(start);

    // Skipping: a skipped group skips its children; a cue's own skip wins.
    const skipGroup = await v1('PATCH', `/rundowns/${id}/cues/${g.id}`, { token: editor, body: { skip: true } });
    expect(skipGroup.body.data).toMatchObject({ skip: true, skipped_by: 'self' });
    expect(skipGroup.body.meta.side_effects).toEqual([{ type: 'rundown.changed', rundown_id: id, changed: ['end_time'] }]);
    let cues = await list(id);
    expect(cues.find((x) => x.id === c.id)).toMatchObject({ skip: false, skipped_by: 'group' });
    expect(await endTime()).toBe(start + 2000);
    await v1('PATCH', `/rundowns/${id}/cues/${c.id}`, { token: editor, body: { skip: true } });
    cues = await list(id);
    expect(cues.find((x) => x.id === c.id)).toMatchObject({ skip: true, skipped_by: 'self' });
    await v1('PATCH', `/rundowns/${id}/cues/${g.id}`, { token: editor, body: { skip: false } });
    await v1('PATCH', `/rundowns/${id}/cues/${c.id}`, { token: editor, body: { skip: false } });
    expect(await endTime()).toBe(start + 2500);

    // Type: a heading becomes a cue and starts counting; moving changes cue_order.
    const typed = await v1('PATCH', `/rundowns/${id}/cues/${h.id}`, { token: editor, body: { type: 'cue', position: { start: true } } });
    expect(typed.body.data).toMatchObject({ type: 'cue', parent_id: null });
    expect(typed.body.meta.side_effects).toEqual([{ type: 'rundown.changed', rundown_id: id, changed: ['cue_order', 'end_time'] }]);
    expect(await endTime()).toBe(start + 9500);
    const moved = await v1('PATCH', `/rundowns/${id}/cues/${a.id}`, { token: editor, body: { position: { start: g.id } } });
    expect(moved.body.data.parent_id).toBe(g.id);
    expect(await titles(id)).toEqual(['H', 'G', 'G/A2', 'G/C']);
    await expectOrderAgrees(id);
  });

  it('converts types within the hierarchy rules', async () => {
    const id = await newRundown();
    const g = await createCue(id, { title: 'G', type: 'group' });
    const c = await createCue(id, { title: 'C', position: { end: g.id } });
    const d = await createCue(id, { title: 'D', type: 'heading', position: { end: g.id } });

    const intoGroup = await v1('PATCH', `/rundowns/${id}/cues/${c.id}`, { token: editor, body: { type: 'group' } });
    expectProblem(intoGroup, 422, 'cues.invalid_type_conversion');
    expect(intoGroup.body.details).toEqual({ cue_id: c.id, from_type: 'cue', to_type: 'group' });

    const notEmpty = await v1('PATCH', `/rundowns/${id}/cues/${g.id}`, { token: editor, body: { type: 'heading' } });
    expectProblem(notEmpty, 409, 'cues.group_not_empty');
    expect(notEmpty.body.details).toEqual({ cue_id: g.id, children_ids: [c.id, d.id] });
    const deleteGroup = await v1('DELETE', `/rundowns/${id}/cues/${g.id}`, { token: owner });
    expectProblem(deleteGroup, 409, 'cues.group_not_empty');
    expect(deleteGroup.body.details).toEqual({ cue_id: g.id, children_ids: [c.id, d.id] });

    // Out of the group and a group in one PATCH; then the emptied group can become a heading or a cue.
    const promoted = await v1('PATCH', `/rundowns/${id}/cues/${c.id}`, { token: editor, body: { type: 'group', position: { end: true } } });
    expect(promoted.body.data).toMatchObject({ type: 'group', parent_id: null });
    await v1('PATCH', `/rundowns/${id}/cues/${d.id}`, { token: editor, body: { position: { end: c.id } } });
    const demoted = await v1('PATCH', `/rundowns/${id}/cues/${g.id}`, { token: editor, body: { type: 'heading' } });
    expect(demoted.body.data.type).toBe('heading');
    const back = await v1('PATCH', `/rundowns/${id}/cues/${g.id}`, { token: editor, body: { type: 'cue' } });
    expect(back.body.data.type).toBe('cue');
    expect(await titles(id)).toEqual(['G', 'C', 'C/D']);
    expect((await v1('DELETE', `/rundowns/${id}/cues/${d.id}`, { token: owner })).status).toBe(204);
    expect((await v1('DELETE', `/rundowns/${id}/cues/${c.id}`, { token: owner })).status).toBe(204);
    await expectOrderAgrees(id);
  });
});

describe('prevent_edits', () => {
  it('is set only on the admin surface, and then every edit of the cue is refused', async () => {
    const id = await newRundown();
    const a = await createCue(id, { title: 'A' });
    const b = await createCue(id, { title: 'B' });
    expectProblem(await v1('PATCH', `/rundowns/${id}/cues/${a.id}`, { token: owner, body: { prevent_edits: true } }), 400, 'cues.invalid_payload');

    const locked = await admin('PATCH', `/rundowns/${id}/cues/${a.id}`, { prevent_edits: true });
    expect(locked.status, locked.text).toBe(200);
    expect(locked.body.data).toMatchObject({ id: a.id, prevent_edits: true });
    const missing = await admin('PATCH', `/rundowns/${id}/cues/cue_nope`, { prevent_edits: true });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('cues.not_found');

    const patch = await v1('PATCH', `/rundowns/${id}/cues/${a.id}`, { token: owner, body: { title: 'changed' } });
    expectProblem(patch, 423, 'cues.prevent_edits');
    expect(patch.body.details).toEqual({ cue_id: a.id });
    expectProblem(await v1('PATCH', `/rundowns/${id}/cues/${a.id}`, { token: owner, body: { position: { end: true } } }), 423, 'cues.prevent_edits');
    expectProblem(await v1('DELETE', `/rundowns/${id}/cues/${a.id}`, { token: owner }), 423, 'cues.prevent_edits');
    // In a batch the lock refuses the whole batch, items before it included.
    const batch = await bulk(id, [{ id: b.id, title: 'B2' }, { id: a.id, title: 'changed' }]);
    expectProblem(batch, 423, 'cues.prevent_edits');
    expect((await list(id)).map((c) => [c.title, c.prevent_edits])).toEqual([
      ['A', true],
      ['B', false],
    ]);
    // Reordering the rundown around a locked cue is not an edit of it.
    const reordered = await v1('POST', `/rundowns/${id}/cues:reorder`, {
      token: editor,
      body: { items: [{ id: b.id, parent_id: null }, { id: a.id, parent_id: null }] },
    });
    expect(reordered.status).toBe(200);

    await admin('PATCH', `/rundowns/${id}/cues/${a.id}`, { prevent_edits: false });
    const after = await v1('PATCH', `/rundowns/${id}/cues/${a.id}`, { token: owner, body: { title: 'changed' } });
    expect(after.body.data).toMatchObject({ title: 'changed', prevent_edits: false });
  });

  it('is toggled from the terminal with npm run admin -- cues lock|unlock', async () => {
    const id = await newRundown();
    const a = await createCue(id, { title: 'A' });
    expect(JSON.parse((await adminCli('cues', 'lock', id, a.id)).stdout)).toMatchObject({ id: a.id, prevent_edits: true });
    expectProblem(await v1('PATCH', `/rundowns/${id}/cues/${a.id}`, { token: owner, body: { title: 'x' } }), 423, 'cues.prevent_edits');
    expect(JSON.parse((await adminCli('cues', 'unlock', id, a.id)).stdout)).toMatchObject({ prevent_edits: false });
    await expect(adminCli('cues', 'lock', id, 'cue_missing')).rejects.toMatchObject({ code: 1 });
  });
});

describe('cues:bulk', () => {
  it('creates and patches in order and answers each item’s cue', async () => {
    const id = await newRundown({ start_time: 0 });
    const a = await createCue(id, { title: 'A', duration_ms: 10 });
    const res = await bulk(id, [
      { title: 'B', duration_ms: 5 },
      { id: a.id, title: 'A2', duration_ms: 20 },
      { title: 'First', type: 'heading', position: { before_cue_id: a.id } },
      { id: a.id, position: { end: true } },
    ]);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.items.map((c: { title: string }) => c.title)).toEqual(['B', 'A2', 'First', 'A2']);
    expect(res.body.meta.side_effects).toEqual([{ type: 'rundown.changed', rundown_id: id, changed: ['cue_order', 'end_time'] }]);
    expect(await titles(id)).toEqual(['First', 'B', 'A2']);
    const { rundown } = await expectOrderAgrees(id);
    expect(rundown.end_time).toBe(25);
  });

  it('is all-or-nothing: a failing item leaves nothing of the batch behind', async () => {
    const id = await newRundown();
    const a = await createCue(id, { title: 'A' });
    const before = await list(id);
    const res = await bulk(id, [{ title: 'New' }, { id: a.id, title: 'A2' }, { id: 'cue_nope', title: 'x' }]);
    expectProblem(res, 404, 'cues.not_found');
    expect(res.body.details).toEqual({ rundown_id: id, cue_id: 'cue_nope' });
    expect(await list(id)).toEqual(before);
    const invalid = await bulk(id, [{ title: 'ok' }, { id: a.id }, { duration_ms: -5 }]);
    expectProblem(invalid, 400, 'cues.invalid_payload');
    expect(invalid.body.details.issues.map((i: { path: unknown[] }) => i.path)).toEqual([['items', 1], ['items', 2, 'duration_ms']]);
    const position = await bulk(id, [{ title: 'ok' }, { position: { after_cue_id: 'cue_gone' } }]);
    expectProblem(position, 422, 'cues.position_target_not_found');
    expect(position.body.details).toEqual({ cue_id: 'cue_gone' });
    expect(await list(id)).toEqual(before);
  });

  it('refuses more than 500 items with bulk.too_many_items, before looking at them', async () => {
    const id = await newRundown();
    const res = await bulk(id, Array.from({ length: 501 }, () => ({ duration_ms: -1 })));
    expectProblem(res, 422, 'bulk.too_many_items');
    expect(res.body.details).toEqual({ limit: 500, received: 501, unit: 'items', resource: 'cues' });
  });

  // The 1,000-cue cap: test/medium/caps.test.ts.
});

describe('cues:reorder', () => {
  it('sets the whole order with parents and answers every cue in display order', async () => {
    const id = await newRundown();
    const created = await bulk(id, [{ title: 'A' }, { title: 'G', type: 'group' }, { title: 'B' }, { title: 'H', type: 'heading' }]);
    const [a, g, b, h] = created.body.data.items as { id: string }[];
    const res = await v1('POST', `/rundowns/${id}/cues:reorder`, {
      token: editor,
      body: { items: [{ id: g!.id, parent_id: null }, { id: h!.id, parent_id: g!.id }, { id: a!.id, parent_id: g!.id }, { id: b!.id }] },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.items.map((c: { title: string; parent_id: string | null }) => [c.title, c.parent_id])).toEqual([
      ['G', null],
      ['H', g!.id],
      ['A', g!.id],
      ['B', null],
    ]);
    expect(res.body.meta.side_effects).toEqual([{ type: 'rundown.changed', rundown_id: id, changed: ['cue_order'] }]);
    expect(await titles(id)).toEqual(['G', 'G/H', 'G/A', 'B']);
    await expectOrderAgrees(id);
    // The same order again changes nothing.
    const again = await v1('POST', `/rundowns/${id}/cues:reorder`, {
      token: editor,
      body: { items: res.body.data.items.map((c: { id: string; parent_id: string | null }) => ({ id: c.id, parent_id: c.parent_id })) },
    });
    expect(again.body.meta.side_effects).toEqual([]);
  });

  it('names every kind of invalid permutation in details', async () => {
    const id = await newRundown();
    const created = await bulk(id, [{ title: 'A' }, { title: 'G', type: 'group' }, { title: 'B' }, { title: 'G2', type: 'group' }]);
    const [a, g, b, g2] = created.body.data.items as { id: string }[];
    const reorder = (items: unknown[]) => v1('POST', `/rundowns/${id}/cues:reorder`, { token: editor, body: { items } });

    const dup = await reorder([{ id: a!.id }, { id: a!.id }, { id: g!.id }, { id: b!.id }, { id: g2!.id }]);
    expectProblem(dup, 422, 'cues.invalid_reorder');
    expect(dup.body.details).toEqual({ duplicates: [a!.id] });
    const unknown = await reorder([{ id: a!.id }, { id: g!.id }, { id: b!.id }, { id: g2!.id }, { id: 'cue_x' }]);
    expect(unknown.body.details).toEqual({ unknown_ids: ['cue_x'] });
    const missing = await reorder([{ id: a!.id }, { id: g!.id }]);
    expect(missing.body.details).toEqual({ missing_ids: [b!.id, g2!.id] });
    const parents = await reorder([{ id: a!.id }, { id: g!.id }, { id: b!.id, parent_id: a!.id }, { id: g2!.id }]);
    expect(parents.body.details).toEqual({ invalid_parents: [{ id: b!.id, parent_id: a!.id }] });
    const nested = await reorder([{ id: a!.id }, { id: g!.id }, { id: b!.id }, { id: g2!.id, parent_id: g!.id }]);
    expect(nested.body.details).toEqual({ nested_groups: [g2!.id] });
    const all = await reorder([{ id: a!.id }, { id: a!.id }, { id: 'cue_x' }, { id: g2!.id, parent_id: g!.id }, { id: g!.id, parent_id: 'cue_y' }]);
    expectProblem(all, 422, 'cues.invalid_reorder');
    expect(Object.keys(all.body.details).sort()).toEqual(['duplicates', 'missing_ids', 'nested_groups', 'unknown_ids']);
    expectProblem(await reorder([{ parent_id: null }]), 400, 'cues.invalid_payload');
    expect(await titles(id)).toEqual(['A', 'G', 'B', 'G2']);
  });
});

describe('rundown create with cues', () => {
  it('creates columns, cues, groups with children and their cells in one go', async () => {
    const res = await v1('POST', '/rundowns', {
      token: editor,
      body: {
        title: 'Nested',
        start_time: 1_000,
        columns: [{ name: 'Script' }, { name: 'Camera' }],
        cues: [
          { title: 'Open', duration_ms: 100, cells: { Script: 'Hello', Camera: { content_html: '<p>Cam 1</p>' } } },
          {
            title: 'Block',
            type: 'group',
            children: [
              { title: 'Inside', duration_ms: 200, cells: { Script: 'text' } },
              { title: 'Note', type: 'heading' },
            ],
          },
          { title: 'Skipped', duration_ms: 400, skip: true },
          { title: 'Empty group', type: 'group', children: [] },
        ],
      },
    });
    expect(res.status, res.text).toBe(201);
    const id = res.body.data.id;
    expect(res.body.data.end_time).toBe(1_300);
    expect(await titles(id)).toEqual(['Open', 'Block', 'Block/Inside', 'Block/Note', 'Skipped', 'Empty group']);
    const { items } = await expectOrderAgrees(id);
    expect(items[4]).toMatchObject({ skip: true, skipped_by: 'self' });
  });

  it('refuses cells on headings and groups, unknown columns and nested groups with rundowns.invalid_payload, leaving nothing behind', async () => {
    const before = (await v1('GET', '/rundowns', { token: viewer, query: { limit: '100' } })).body.data.items.length;
    const res = await v1('POST', '/rundowns', {
      token: editor,
      body: {
        title: 'Bad',
        columns: [{ name: 'Script' }],
        cues: [
          { type: 'heading', cells: { Script: 'x' } },
          { type: 'group', cells: { Script: 'x' }, children: [{ type: 'group' }, { cells: { Nope: 'x' } }] },
          { type: 'cue', children: [{}] },
        ],
      },
    });
    expectProblem(res, 400, 'rundowns.invalid_payload');
    expect(res.body.details.issues.map((i: { path: unknown[] }) => i.path)).toEqual([
      ['cues', 0, 'cells', 'Script'],
      ['cues', 1, 'cells', 'Script'],
      ['cues', 1, 'children', 0, 'type'],
      ['cues', 1, 'children', 1, 'cells', 'Nope'],
      ['cues', 2, 'children'],
    ]);
    const scheduled = await v1('POST', '/rundowns', { token: editor, body: { title: 'Bad', cues: [{}, { scheduled: true }] } });
    expectProblem(scheduled, 400, 'rundowns.invalid_payload');
    expect(scheduled.body.details.issues[0].path).toEqual(['cues', 1, 'scheduled']);
    expectProblem(await v1('POST', '/rundowns', { token: editor, body: { title: 'Bad', cues: [{ duration_ms: -1 }] } }), 400, 'rundowns.invalid_payload');
    expect((await v1('GET', '/rundowns', { token: viewer, query: { limit: '100' } })).body.data.items.length).toBe(before);
  });

  it('applies the cue, column and plan caps to the whole create', async () => {
    const cues = [{ type: 'group', children: Array.from({ length: 500 }, () => ({})) }, ...Array.from({ length: 500 }, () => ({}))];
    const tooMany = await v1('POST', '/rundowns', { token: editor, body: { title: 'Big', cues } });
    expectProblem(tooMany, 422, 'cues.too_many');
    expect(tooMany.body.details).toEqual({ limit: 1000, received: 1001, unit: 'cues' });
    const atCap = await v1('POST', '/rundowns', { token: editor, body: { title: 'Big', cues: cues.slice(0, 500) } });
    expect(atCap.status).toBe(201);
    expect(await list(atCap.body.data.id)).toHaveLength(1000);

    const columns = await v1('POST', '/rundowns', {
      token: editor,
      body: { title: 'Wide', columns: Array.from({ length: 51 }, (_, i) => ({ name: `c${i}` })), cues: [{}] },
    });
    expectProblem(columns, 422, 'columns.too_many');

    const small = await createTeam({ plan: 'free', max_rundowns: 1 });
    const smallToken = await small.token('EDIT');
    expect((await v1('POST', '/rundowns', { token: smallToken, body: { title: 'One', cues: [{}] } })).status).toBe(201);
    const plan = await v1('POST', '/rundowns', { token: smallToken, body: { title: 'Two', cues: [{}] } });
    expectProblem(plan, 422, 'plan.limit_exceeded');
    expect(plan.body.details).toMatchObject({ limit: 1, received: 2, resource: 'rundowns' });
  });
});
