import { beforeAll, describe, expect, it } from 'vitest';
import { createRundown, createTeam, v1 } from '../support/client.js';

/**
 * One team sends hostile bodies (huge values in every id, key and name field of the write routes,
 * thousands of duplicates and unknown ids in the bulk and create routes) while another team reads
 * its own rundown: every hostile request gets a clear 4xx of its own, and none of them reaches the
 * other team (an error echoing a huge value once dropped the shared connection to a service, and
 * every tenant's calls on it waited for their 5 s deadline).
 */
let hostile: string;
let target: string;
let cue: string;
let column: string;
let neighbour: string;
let neighbourRundown: string;

/** `bytes` of UTF-8 (4-byte characters): what a JSON field of that size holds. */
const huge = (bytes: number) => '\u{1F600}'.repeat(Math.floor(bytes / 4));
const fakeId = (i: number) => `cue_${i.toString(36).padStart(16, 'x')}`;

beforeAll(async () => {
  const attacker = await createTeam();
  hostile = await attacker.token('OWNER');
  const made = await createRundown(hostile, { title: 'Target', columns: [{ name: 'Script' }], cues: [{ title: 'One' }] });
  target = made.id;
  cue = made.cue_order[0].id;
  column = made.column_order[0];
  const other = await createTeam();
  neighbour = await other.token('VIEW');
  neighbourRundown = (await createRundown(await other.token('OWNER'), { title: 'Neighbour', columns: [{ name: 'Script' }] })).id;
});

describe('a hostile tenant cannot hurt another', () => {
  it('answers every hostile body with a bounded 4xx while the other team’s reads keep answering 200 within 1 s', async () => {
    const r = `/rundowns/${target}`;
    const hostileRequests: [string, string, unknown][] = [
      ['POST', `${r}/columns`, { name: 'New', before_column_id: huge(40_000) }],
      ['POST', `${r}/columns`, { name: 'New', after_column_id: 'x'.repeat(100_000) }],
      ['POST', `${r}/columns`, { name: huge(900_000) }],
      ['PATCH', `${r}/columns/${column}`, { name: 'Renamed', before_column_id: huge(300_000) }],
      ['POST', `${r}/columns:reorder`, { column_ids: Array.from({ length: 20_000 }, (_, i) => `col_${i}`) }],
      ['PATCH', `${r}/cells`, { cue_id: huge(200_000), column_id: column, content: 'x' }],
      ['PATCH', `${r}/cells`, { cue_id: cue, column_id: huge(900_000), content: 'x' }],
      ['POST', `${r}/cells:bulk`, { items: Array.from({ length: 500 }, (_, i) => ({ cue_id: fakeId(i), column_id: column, content: 'x' })) }],
      ['POST', `${r}/cells:bulk`, { items: [{ cue_id: huge(500_000), column_id: column, content: 'x' }] }],
      ['POST', `${r}/mentions:bulk`, { items: [{ id: huge(600_000), name: 'Anna' }] }],
      ['POST', `${r}/mentions:bulk`, { items: Array.from({ length: 500 }, (_, i) => ({ id: `mnt_${i}`, name: `Name ${i}` })) }],
      ['POST', `${r}/mentions`, { name: huge(400_000) }],
      ['POST', `${r}/text-variables`, { key: huge(300_000), value: 'v' }],
      ['POST', `${r}/text-variables:bulk`, { items: Array.from({ length: 500 }, () => ({ key: 'same', value: 'v' })) }],
      ['POST', `${r}/cues`, { title: 'New', position: { before_cue_id: huge(700_000) } }],
      ['POST', `${r}/cues`, { title: huge(800_000) }],
      ['POST', `${r}/cues:bulk`, { items: Array.from({ length: 500 }, () => ({ id: 'cue_same', title: 'Dup' })) }],
      ['POST', `${r}/cues:bulk`, { items: [{ id: huge(100_000), title: 'Big' }] }],
      ['POST', `${r}/cues:reorder`, { items: Array.from({ length: 30_000 }, (_, i) => ({ id: fakeId(i) })) }],
      ['POST', `${r}/action:jump`, { cue_id: huge(900_000) }],
      ['PATCH', r, { title: huge(900_000) }],
      ['POST', '/rundowns', { title: 'Dup', columns: Array.from({ length: 20_000 }, () => ({ name: 'Same' })) }],
      ['POST', '/rundowns', { title: 'Dup', columns: Array.from({ length: 50 }, () => ({ name: huge(400) })) }],
      ['POST', '/rundowns', { title: 'Cells', columns: [{ name: 'A' }], cues: Array.from({ length: 900 }, () => ({ title: 'c', cells: { ['\u{1F600}'.repeat(25)]: 'x' } })) }],
      ['GET', `${r}/cues/${'x'.repeat(8_000)}`, undefined],
      ['GET', `/rundowns/${huge(8_000)}/cells`, undefined],
    ];

    const reads: { status: number; ms: number }[] = [];
    let hostileDone = false;
    const reader = (async () => {
      while (!hostileDone) {
        const started = performance.now();
        const res = await v1('GET', `/rundowns/${neighbourRundown}`, { token: neighbour });
        reads.push({ status: res.status, ms: performance.now() - started });
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    })();

    const answers: string[] = [];
    try {
      for (const [method, path, body] of hostileRequests) {
        const res = await v1(method, path, { token: hostile, ...(body !== undefined ? { body } : {}) });
        const what = `${method} ${path.slice(0, 80)} -> ${res.status} ${res.body?.code}`;
        answers.push(what);
        expect(res.status, what).toBeGreaterThanOrEqual(400);
        expect(res.status, what).toBeLessThan(500);
        expect(res.headers.get('content-type'), what).toContain('application/problem+json');
        // The answer echoes at most a bounded part of what was sent.
        expect(res.text.length, what).toBeLessThan(64 * 1024);
      }
    } finally {
      hostileDone = true;
      await reader;
    }

    expect(reads.length).toBeGreaterThan(0);
    expect(reads.filter((read) => read.status !== 200), answers.join('\n')).toEqual([]);
    expect(Math.max(...reads.map((read) => read.ms))).toBeLessThan(1_000);
    // The target rundown is as it was: nothing hostile was stored.
    const after = await v1('GET', `/rundowns/${target}`, { token: hostile });
    expect(after.body.data).toMatchObject({ title: 'Target', column_order: [column] });
  });
});
