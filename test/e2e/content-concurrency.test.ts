import { beforeAll, describe, expect, it } from 'vitest';
import { admin, createRundown, createTeam, v1 } from '../support/client.js';
import { storedColumns } from '../support/db.js';

let editor: string;

beforeAll(async () => {
  const team = await createTeam();
  editor = await team.token('EDIT');
});

async function newRundown(columns: string[] = []): Promise<{ id: string; columns: string[] }> {
  const rundown = await createRundown(editor, { title: 'Concurrency', columns: columns.map((name) => ({ name })) });
  return { id: rundown.id, columns: rundown.column_order };
}

function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = (seed * (i + 7)) % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

const statuses = (responses: { status: number }[]) => responses.map((r) => r.status).sort();

describe('parallel writers on one rundown', () => {
  it('keeps the column order a permutation: reorders, creates at one position and renames racing', async () => {
    const rundown = await newRundown(['A', 'B', 'C', 'D', 'E', 'F']);
    const [a] = rundown.columns as [string];
    const p1 = (await admin('POST', `/rundowns/${rundown.id}/columns`, { name: 'p1', private: true })).body.data.id as string;
    const p2 = (await admin('POST', `/rundowns/${rundown.id}/columns`, { name: 'p2', private: true })).body.data.id as string;

    const writes = await Promise.all([
      ...Array.from({ length: 8 }, (_, i) =>
        v1('POST', `/rundowns/${rundown.id}/columns:reorder`, { token: editor, body: { column_ids: shuffled(rundown.columns, i + 2) } }),
      ),
      ...Array.from({ length: 8 }, (_, i) =>
        v1('POST', `/rundowns/${rundown.id}/columns`, { token: editor, body: { name: `new${i}`, before_column_id: a } }),
      ),
      ...rundown.columns.slice(1, 5).map((id, i) =>
        v1('PATCH', `/rundowns/${rundown.id}/columns/${id}`, { token: editor, body: { name: `renamed${i}` } }),
      ),
    ]);
    const [reorders, creates, renames] = [writes.slice(0, 8), writes.slice(8, 16), writes.slice(16)];
    // Every create and rename lands; a reorder either lands or (when a create changed the set first) is refused cleanly.
    expect(statuses(creates)).toEqual(Array(8).fill(201));
    expect(statuses(renames)).toEqual(Array(4).fill(200));
    for (const r of reorders) {
      if (r.status !== 200) expect(r.body.code, r.text).toBe('columns.invalid_reorder');
    }

    const stored = await storedColumns(rundown.id);
    expect(stored.order).toHaveLength(16);
    expect(new Set(stored.order).size).toBe(16);
    expect(stored.rows).toBe(16);
    expect(stored.order.indexOf(p1)).toBeLessThan(stored.order.indexOf(p2));
    const list = await v1('GET', `/rundowns/${rundown.id}/columns`, { token: editor });
    const rundownRead = await v1('GET', `/rundowns/${rundown.id}`, { token: editor });
    const publicIds = list.body.data.items.map((c: { id: string }) => c.id);
    expect(publicIds).toEqual(stored.order.filter((id) => id !== p1 && id !== p2));
    expect(rundownRead.body.data.column_order).toEqual(publicIds);
    // The creates all went "before A", so they sit together right before it, whatever the reorders did.
    const names = list.body.data.items.map((c: { name: string }) => c.name);
    const at = names.indexOf('A');
    expect(names.slice(at - 8, at).sort()).toEqual(Array.from({ length: 8 }, (_, i) => `new${i}`));
  });

  it('applies one of two racing full reorders, never a mix', async () => {
    const rundown = await newRundown(['A', 'B', 'C', 'D', 'E']);
    const first = shuffled(rundown.columns, 3);
    const second = [...rundown.columns].reverse();
    const [x, y] = await Promise.all([
      v1('POST', `/rundowns/${rundown.id}/columns:reorder`, { token: editor, body: { column_ids: first } }),
      v1('POST', `/rundowns/${rundown.id}/columns:reorder`, { token: editor, body: { column_ids: second } }),
    ]);
    expect([x.status, y.status]).toEqual([200, 200]);
    const order = (await v1('GET', `/rundowns/${rundown.id}`, { token: editor })).body.data.column_order;
    expect([first, second]).toContainEqual(order);
  });

  it('never lets parallel creates break the column, mention or variable caps or their uniqueness', async () => {
    const rundown = await newRundown(Array.from({ length: 45 }, (_, i) => `c${i}`));
    const seeded = await Promise.all([
      v1('POST', `/rundowns/${rundown.id}/mentions:bulk`, { token: editor, body: { items: Array.from({ length: 95 }, (_, i) => ({ name: `m${i}` })) } }),
      v1('POST', `/rundowns/${rundown.id}/text-variables:bulk`, {
        token: editor,
        body: { items: Array.from({ length: 95 }, (_, i) => ({ key: `v${i}`, value: '' })) },
      }),
    ]);
    expect(statuses(seeded)).toEqual([200, 200]);

    const results = await Promise.all([
      ...Array.from({ length: 10 }, (_, i) => v1('POST', `/rundowns/${rundown.id}/columns`, { token: editor, body: { name: `n${i}` } })),
      ...Array.from({ length: 10 }, (_, i) => v1('POST', `/rundowns/${rundown.id}/mentions`, { token: editor, body: { name: `new${i}` } })),
      ...Array.from({ length: 10 }, (_, i) =>
        v1('POST', `/rundowns/${rundown.id}/text-variables`, { token: editor, body: { key: `new${i}`, value: '' } }),
      ),
      ...Array.from({ length: 3 }, () => v1('POST', `/rundowns/${rundown.id}/mentions`, { token: editor, body: { name: 'same' } })),
    ]);
    const codes = (responses: typeof results) => responses.map((r) => (r.status === 201 ? 'created' : r.body.code)).sort();
    expect(codes(results.slice(0, 10))).toEqual([...Array(5).fill('columns.too_many'), ...Array(5).fill('created')]);
    // Ten distinct names compete for five slots, so exactly five mentions are created whatever the interleaving.
    const mentionCodes = codes([...results.slice(10, 20), ...results.slice(30)]);
    expect(mentionCodes.filter((c) => c === 'created')).toHaveLength(5);
    expect(mentionCodes.every((c) => ['created', 'mentions.too_many', 'mentions.name_conflict'].includes(c))).toBe(true);
    expect(codes(results.slice(20, 30))).toEqual([...Array(5).fill('created'), ...Array(5).fill('text_variables.too_many')]);

    const [mentions, variables] = await Promise.all([
      v1('GET', `/rundowns/${rundown.id}/mentions`, { token: editor }),
      v1('GET', `/rundowns/${rundown.id}/text-variables`, { token: editor }),
    ]);
    expect((await storedColumns(rundown.id)).order).toHaveLength(50);
    expect(mentions.body.data.items).toHaveLength(100);
    expect(new Set(mentions.body.data.items.map((m: { name: string }) => m.name)).size).toBe(100);
    expect(mentions.body.data.items.filter((m: { name: string }) => m.name === 'same').length).toBeLessThanOrEqual(1);
    expect(variables.body.data.items).toHaveLength(100);
  });

  it('lets exactly one of several creates of one name or key win', async () => {
    const rundown = await newRundown();
    const results = await Promise.all([
      ...Array.from({ length: 4 }, () => v1('POST', `/rundowns/${rundown.id}/mentions`, { token: editor, body: { name: 'Solo' } })),
      ...Array.from({ length: 4 }, () =>
        v1('POST', `/rundowns/${rundown.id}/text-variables`, { token: editor, body: { key: 'solo', value: '' } }),
      ),
      ...Array.from({ length: 4 }, () => v1('POST', `/rundowns/${rundown.id}/columns`, { token: editor, body: { name: 'Solo' } })),
    ]);
    const outcome = (from: number) =>
      results
        .slice(from, from + 4)
        .map((r) => (r.status === 201 ? 'created' : r.body.code))
        .sort();
    expect(outcome(0)).toEqual(['created', ...Array(3).fill('mentions.name_conflict')]);
    expect(outcome(4)).toEqual(['created', ...Array(3).fill('text_variables.key_exists')]);
    expect(outcome(8)).toEqual(['columns.invalid_payload', 'columns.invalid_payload', 'columns.invalid_payload', 'created']);
  });
});
