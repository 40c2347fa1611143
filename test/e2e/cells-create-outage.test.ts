import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTeam, system, v1 } from '../support/client.js';
import { query } from '../support/db.js';
import { freeze, pidListeningOn } from '../support/processes.js';

let owner: string;
let viewer: string;
let thaw: (() => void) | undefined;

beforeAll(async () => {
  const team = await createTeam();
  [owner, viewer] = await Promise.all([team.token('OWNER'), team.token('VIEW')]);
});

afterEach(() => thaw?.());

async function until<T>(probe: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (ok(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 200));
  }
}

const storedWith = async (marker: string) =>
  (await query<{ n: number }>('SELECT count(*)::int AS n FROM cells.cells WHERE content LIKE $1', [`%${marker}%`]))[0]!.n;

describe('rundown create with nested cells while the cells service is stopped', () => {
  it('leaves no rundown, no cues and no visible cell; the late cells are collected; the next create is read back whole', async () => {
    const marker = `outage-${Date.now()}`;
    const body = {
      title: marker,
      columns: [{ name: 'Script' }],
      cues: [
        { type: 'cue', title: 'one', cells: { Script: `${marker} one` } },
        { type: 'cue', title: 'two', cells: { Script: { content_html: `<b>${marker} two</b>` } } },
      ],
    };
    // The cells service keeps its connections but answers nothing while the create runs.
    const cells = freeze(pidListeningOn(system().launcher.grpc_ports.cells!));
    thaw = cells.resume;
    const started = Date.now();
    const res = await v1('POST', '/rundowns', { token: owner, body });
    expect(res.status, res.text).toBe(503);
    expect(res.body.code).toBe('service_unavailable');
    expect(Date.now() - started).toBeLessThan(15_000);

    // Nothing of the create is visible, nor stored on the rundown side.
    const list = await v1('GET', '/rundowns', { token: viewer, query: { limit: '100' } });
    expect(list.body.data.items.map((r: { title: string }) => r.title)).not.toContain(marker);
    expect(await query('SELECT 1 FROM rundown.rundowns WHERE title = $1', [marker])).toHaveLength(0);
    expect(await query("SELECT 1 FROM rundown.cues WHERE title IN ('one', 'two') AND rundown_id NOT IN (SELECT id FROM rundown.rundowns)")).toHaveLength(0);

    // Thawed, the cells service handles the requests that waited for it: the late staged write
    // lands for a rundown that never committed (invisible: no such rundown), then is removed by
    // the create's compensation or, at the latest, by the orphan collector.
    cells.resume();
    const remaining = await until(() => storedWith(marker), (n) => n === 0);
    expect(remaining).toBe(0);
    expect(await until(async () => (await query('SELECT 1 FROM cells.staged_rundowns WHERE staged_at < now()')).length, (n) => n === 0)).toBe(0);

    // Back to normal: the same create succeeds and the very next GET reads it whole.
    const created = await until(() => v1('POST', '/rundowns', { token: owner, body }), (r) => r.status === 201);
    expect(created.status, created.text).toBe(201);
    const read = await v1('GET', `/rundowns/${created.body.data.id}`, { token: viewer, query: { include: 'cues,cells' } });
    expect(read.status, read.text).toBe(200);
    expect(read.body.included.cues).toHaveLength(2);
    expect(read.body.included.cells.map((c: { content: string }) => c.content).sort()).toEqual([`${marker} one`, `${marker} two`]);
  });
});
