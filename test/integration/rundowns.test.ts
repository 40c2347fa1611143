import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { createDataSource } from '@rundown/shared';
import type { DataSource } from 'typeorm';
import { RundownsRepository } from '../../services/rundown/src/repositories/rundowns.js';
import { CuesRepository } from '../../services/rundown/src/repositories/cues.js';
import { pendingCellStore, RundownsService } from '../../services/rundown/src/domain/rundowns.js';
import { CursorCodec } from '../../services/rundown/src/domain/cursor.js';
import { OutboxEventLog } from '../../services/rundown/src/events/outbox-log.js';

let db: DataSource;
let rundowns: RundownsService;

beforeAll(async () => {
  db = createDataSource({ url: inject('databaseUrl'), schema: 'rundown', migrations: [], applicationName: 'it-rundown', poolSize: 20 });
  await db.initialize();
  rundowns = new RundownsService(new RundownsRepository(db), new CursorCodec('c'.repeat(32)), new CuesRepository(db), pendingCellStore, new OutboxEventLog());
});

afterAll(async () => {
  await db.destroy();
});

const ctx = (teamId: string, extra: Record<string, unknown> = {}) => ({ requestId: 'req_it', teamId, role: 'OWNER' as const, ...extra });

describe('rundowns against PostgreSQL', () => {
  it('never lets racing creates overrun the plan quota', async () => {
    const team = `team_race_${Date.now()}`;
    const results = await Promise.allSettled(
      Array.from({ length: 16 }, (_, i) => rundowns.create(ctx(team, { maxRundowns: 10 }), { title: `r${i}`, timezone: null, start_time: null, status: undefined, settings: undefined, columns: [], cues: [] })),
    );
    const created = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r) => r.status === 'rejected');
    expect(created).toHaveLength(10);
    expect(refused).toHaveLength(6);
    for (const r of refused) expect((r as PromiseRejectedResult).reason).toMatchObject({ code: 'plan.limit_exceeded' });
    const listed = await rundowns.list(ctx(team), 100, undefined);
    expect(listed.items).toHaveLength(10);
  });

  it('creates columns and cues in the same transaction and leaves nothing behind when it fails', async () => {
    const team = `team_tx_${Date.now()}`;
    await expect(
      rundowns.create(ctx(team, { maxRundowns: 5 }), {
        title: 'dup',
        timezone: null,
        start_time: null,
        status: undefined,
        settings: undefined,
        columns: [{ name: 'A' }, { name: 'A' }],
        cues: [{ fields: { title: 'kept?' }, cells: [], children: [] }],
      }),
    ).rejects.toThrow();
    const [row] = (await db.query('SELECT count(*)::int AS n FROM rundown.rundowns WHERE team_id = $1', [team])) as { n: number }[];
    expect(row?.n).toBe(0);
    const [cues] = (await db.query(`SELECT count(*)::int AS n FROM rundown.cues WHERE title = 'kept?'`)) as { n: number }[];
    expect(cues?.n).toBe(0);
  });

  it('shows a rundown-scoped caller only its rundown', async () => {
    const team = `team_scope_${Date.now()}`;
    const input = { timezone: null, start_time: null, status: undefined, settings: undefined, columns: [], cues: [] };
    const a = await rundowns.create(ctx(team, { maxRundowns: 5 }), { title: 'a', ...input });
    const b = await rundowns.create(ctx(team, { maxRundowns: 5 }), { title: 'b', ...input });
    const scoped = ctx(team, { tokenRundownId: a.id, role: 'EDIT' });
    expect((await rundowns.list(scoped, 10, undefined)).items.map((r) => r.id)).toEqual([a.id]);
    await expect(rundowns.get(scoped, b.id)).rejects.toMatchObject({ code: 'rundowns.not_found' });
    await expect(rundowns.create(scoped, { title: 'c', ...input })).rejects.toMatchObject({ code: 'forbidden' });
  });
});
