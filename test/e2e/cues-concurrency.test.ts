import { beforeAll, describe, expect, it } from 'vitest';
import { createTeam, v1 } from '../support/client.js';
import { expectCueInvariants, listCues } from '../support/cues.js';

/**
 * Parallel writers on one rundown: every content write locks the rundown row first, so writes
 * serialize; each either succeeds on the state it finds or fails with a clear code, and the order,
 * the rows and the cap always agree afterwards.
 */
let owner: string;

beforeAll(async () => {
  owner = await (await createTeam()).token('OWNER');
});

async function rundownWith(count: number, extra: Record<string, unknown>[] = []): Promise<{ id: string; ids: string[] }> {
  const created = await v1('POST', '/rundowns', { token: owner, body: { title: 'Race', start_time: 0 } });
  const id = created.body.data.id as string;
  const ids: string[] = [];
  for (let done = 0; done < count + extra.length; done += 500) {
    const items = [...extra, ...Array.from({ length: count }, (_, i) => ({ title: `c${i}`, duration_ms: 10 }))].slice(done, done + 500);
    const res = await v1('POST', `/rundowns/${id}/cues:bulk`, { token: owner, body: { items } });
    expect(res.status, res.text).toBe(200);
    ids.push(...res.body.data.items.map((c: { id: string }) => c.id));
  }
  return { id, ids };
}

const shuffled = <T>(list: T[]) => list.map((v) => [Math.random(), v] as const).sort((a, b) => a[0] - b[0]).map(([, v]) => v);

describe('concurrent cue writes on one rundown', () => {
  it('keeps order, rows and end_time consistent under reorders, bulks, deletes and same-position creates at once', async () => {
    const { id, ids } = await rundownWith(100, [{ title: 'G', type: 'group' }]);
    const [group, ...plain] = ids;
    const anchor = plain[50]!;
    const doomed = plain.slice(0, 10);
    const reorderBody = () => ({
      items: shuffled(ids).map((cueId, i) => ({ id: cueId, parent_id: cueId !== group && i % 7 === 0 ? group : null })),
    });
    const requests = [
      v1('POST', `/rundowns/${id}/cues:reorder`, { token: owner, body: reorderBody() }),
      v1('POST', `/rundowns/${id}/cues:reorder`, { token: owner, body: reorderBody() }),
      ...Array.from({ length: 10 }, (_, i) =>
        v1('POST', `/rundowns/${id}/cues`, { token: owner, body: { title: `same${i}`, duration_ms: 1, position: { after_cue_id: anchor } } }),
      ),
      v1('POST', `/rundowns/${id}/cues:bulk`, {
        token: owner,
        body: { items: [...Array.from({ length: 20 }, (_, i) => ({ title: `bulk${i}`, position: { end: group } })), { id: doomed[0], title: 'renamed' }] },
      }),
      ...doomed.map((cueId) => v1('DELETE', `/rundowns/${id}/cues/${cueId}`, { token: owner })),
      ...plain.slice(60, 70).map((cueId) => v1('PATCH', `/rundowns/${id}/cues/${cueId}`, { token: owner, body: { duration_ms: 1000, position: { start: group } } })),
    ];
    const results = await Promise.all(requests);
    // Stale reorders and a bulk that patches a deleted cue lose with a clear code; nothing else fails.
    const outcomes = results.map((r) => (r.status < 300 ? r.status : `${r.status} ${r.body.code}`));
    for (const outcome of outcomes) expect([200, 201, 204, '422 cues.invalid_reorder', '404 cues.not_found']).toContain(outcome);
    const [reorderA, reorderB] = results;
    for (const r of [reorderA!, reorderB!].filter((x) => x.status === 422)) {
      expect(Object.keys(r.body.details).every((k) => ['missing_ids', 'unknown_ids'].includes(k))).toBe(true);
    }
    expect(results.slice(2, 12).every((r) => r.status === 201)).toBe(true);
    const bulkOk = results[12]!.status === 200;
    if (!bulkOk) expect(results[12]!.body.code).toBe('cues.not_found');

    const { items } = await expectCueInvariants(owner, id);
    const expected = new Set([...ids.filter((c) => !doomed.includes(c)), ...results.slice(2, 12).map((r) => r.body.data.id as string)]);
    if (bulkOk) for (const c of results[12]!.body.data.items.slice(0, 20)) expected.add(c.id);
    expect(new Set(items.map((c) => c.id))).toEqual(expected);
    // The ten creates at one position all landed right after the anchor.
    const at = items.findIndex((c) => c.id === anchor);
    const neighbours = items.slice(at + 1, at + 11).map((c) => c.title);
    expect(neighbours.sort()).toEqual(Array.from({ length: 10 }, (_, i) => `same${i}`).sort());
  });

  it('lets parallel reorders of the same set each apply in turn', async () => {
    const { id, ids } = await rundownWith(50);
    const bodies = Array.from({ length: 4 }, () => shuffled(ids).map((cueId) => ({ id: cueId, parent_id: null })));
    const results = await Promise.all(bodies.map((body) => v1('POST', `/rundowns/${id}/cues:reorder`, { token: owner, body: { items: body } })));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    const { items } = await expectCueInvariants(owner, id);
    expect(bodies.map((b) => b.map((x) => x.id).join())).toContain(items.map((c) => c.id).join());
  });

  it('never lets racing creates pass the 1,000-cue cap', async () => {
    const { id } = await rundownWith(990);
    const results = await Promise.all(
      Array.from({ length: 6 }, () =>
        v1('POST', `/rundowns/${id}/cues:bulk`, { token: owner, body: { items: Array.from({ length: 5 }, () => ({ title: 'late' })) } }),
      ),
    );
    const statuses = results.map((r) => (r.status === 200 ? 'ok' : r.body.code)).sort();
    expect(statuses).toEqual(['cues.too_many', 'cues.too_many', 'cues.too_many', 'cues.too_many', 'ok', 'ok']);
    expect(await listCues(owner, id)).toHaveLength(1000);
    await expectCueInvariants(owner, id);
  });
});
