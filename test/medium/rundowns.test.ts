import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError, type Database } from '@rundown/shared';
import type { CellsPort } from '../../services/rundown/src/domain/cells-port.js';
import { noCellsYet } from '../../services/rundown/src/domain/cells-port.js';
import type { RundownsService } from '../../services/rundown/src/domain/rundowns.js';
import { domainOf, openDatabase } from './support.js';

let db: Database;
let rundowns: RundownsService;

beforeAll(async () => {
  db = await openDatabase('rundowns', 20);
  // Plan facts answer the free plan's 10 rundowns (support.ts: quota); the racing test counts against it.
  rundowns = domainOf(db).rundowns;
});

afterAll(async () => {
  await db.destroy();
});

const ctx = (teamId: string, extra: Record<string, unknown> = {}) => ({ requestId: 'req_it', teamId, role: 'OWNER' as const, ...extra });

describe('rundowns (domain + repositories, real PostgreSQL)', () => {
  it('never lets racing creates overrun the plan quota', async () => {
    const team = `team_race_${Date.now()}`;
    const results = await Promise.allSettled(
      Array.from({ length: 16 }, (_, i) => rundowns.create(ctx(team), { title: `r${i}`, timezone: null, start_time: null, status: undefined, settings: undefined, columns: [], cues: [] })),
    );
    const created = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r) => r.status === 'rejected');
    expect(created).toHaveLength(10);
    expect(refused).toHaveLength(6);
    for (const r of refused) expect((r as PromiseRejectedResult).reason).toMatchObject({ code: 'plan.limit_exceeded' });
    const listed = await rundowns.list(ctx(team), 100, undefined);
    expect(listed.items).toHaveLength(10);
  });

  it('refuses duplicate column names as a catalogue error from the domain (never a database UNIQUE violation)', async () => {
    const team = `team_dup_${Date.now()}`;
    await expect(
      rundowns.create(ctx(team), {
        title: 'dup',
        timezone: null,
        start_time: null,
        status: undefined,
        settings: undefined,
        columns: [{ name: 'A' }, { name: 'B' }, { name: 'A' }],
        cues: [],
      }),
    ).rejects.toMatchObject({
      code: 'rundowns.invalid_payload',
      details: { issues: [{ path: ['columns', 2, 'name'], message: 'Duplicate column name "A" (also at columns[0]).', code: 'custom' }] },
    });
  });

  it('creates columns and cues in the same transaction and leaves nothing behind when a later step refuses', async () => {
    const team = `team_tx_${Date.now()}`;
    // The cells context refusing the new rundown's cells comes last in the transaction.
    const refusingCells: CellsPort = {
      ...noCellsYet,
      writeForNewRundown: async () => {
        throw new AppError('cells.prevent_edits', { details: { cue_id: 'x' } });
      },
    };
    const strict = domainOf(db, refusingCells).rundowns;
    await expect(
      strict.create(ctx(team), {
        title: 'refused',
        timezone: null,
        start_time: null,
        status: undefined,
        settings: undefined,
        columns: [{ name: 'A' }],
        cues: [{ fields: { title: 'kept?' }, cells: [{ column_name: 'A', content: { text: 'x' } }], children: [] }],
      }),
    ).rejects.toMatchObject({ code: 'cells.prevent_edits' });
    const [row] = (await db.query('SELECT count(*)::int AS n FROM rundown.rundowns WHERE team_id = $1', [team])) as { n: number }[];
    expect(row?.n).toBe(0);
    const [cues] = (await db.query(`SELECT count(*)::int AS n FROM rundown.cues WHERE title = 'kept?'`)) as { n: number }[];
    expect(cues?.n).toBe(0);
  });

  it('shows a rundown-scoped caller only its rundown', async () => {
    const team = `team_scope_${Date.now()}`;
    const input = { timezone: null, start_time: null, status: undefined, settings: undefined, columns: [], cues: [] };
    const { result: a } = await rundowns.create(ctx(team), { title: 'a', ...input });
    const { result: b } = await rundowns.create(ctx(team), { title: 'b', ...input });
    const scoped = ctx(team, { tokenRundownId: a.id, role: 'EDIT' });
    expect((await rundowns.list(scoped, 10, undefined)).items.map((r) => r.id)).toEqual([a.id]);
    await expect(rundowns.get(scoped, b.id)).rejects.toMatchObject({ code: 'rundowns.not_found' });
    await expect(rundowns.create(scoped, { title: 'c', ...input })).rejects.toMatchObject({ code: 'forbidden' });
  });
});
