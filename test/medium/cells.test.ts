import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createServiceDatabase, type CallerContext, type Database } from '@rundown/shared';
import type { CellsService } from '../../services/cells/src/domain/cells.js';
import type { CoordinatesPort } from '../../services/cells/src/domain/coordinates.js';
import { cellsDomain } from '../../services/cells/src/wiring.js';
import type { CellsPort } from '../../services/rundown/src/domain/cells-port.js';
import type { CoordinatesService } from '../../services/rundown/src/domain/coordinates.js';
import type { RundownsService } from '../../services/rundown/src/domain/rundowns.js';
import { domainOf, openDatabase } from './support.js';
import { SnapshotCellsResponse } from '@rundown/shared/proto/rundown/cells/v1/cells';

/**
 * The two contexts' domains and repositories against real PostgreSQL (the tier's migrated
 * database, both schemas), wired to each other in process: each port implemented by the other
 * side's real service, as its gRPC adapter would.
 */
let rundownDb: Database;
let cellsDb: Database;
let cells: CellsService;
let coordinates: CoordinatesService;
let rundown: ReturnType<typeof domainOf>;
let rundownsFor: (port: CellsPort) => RundownsService;
let cellsPort: CellsPort;

beforeAll(async () => {
  cellsDb = await createServiceDatabase({ url: inject('databaseUrl'), applicationName: 'medium-cells' }).initialize();
  rundownDb = await openDatabase('cells');
  rundownsFor = (port) => domainOf(rundownDb, port).rundowns;
  const coordinatesPort: CoordinatesPort = {
    describe: (ctx, rundownId, q) =>
      coordinates.describe(ctx, rundownId, { cueIds: q.cueIds ?? [], columnIds: q.columnIds ?? [], allCues: q.allCues ?? false, allColumns: q.allColumns ?? false }),
    existing: async (ids) => new Set(await coordinates.existing(ids)),
  };
  cells = cellsDomain(cellsDb, { coordinates: coordinatesPort, cursorSecret: 'd'.repeat(32) }).cells;
  cellsPort = {
    writeForNewRundown: async (_ctx, rundownId, items) => void (await cells.stage(rundownId, items)),
    confirmNewRundown: (rundownId) => cells.confirm(rundownId),
    deleteColumnCells: (rundownId, columnId) => cells.deleteColumn(rundownId, columnId),
    deleteCueCells: async (rundownId, cueIds) => void (await cells.deleteCues(rundownId, cueIds)),
    deleteRundownCells: async (rundownId) => void (await cells.deleteRundown(rundownId)),
    snapshotCells: async (_ctx, rundownId, snapshotId, cueIds, columnIds, max) => {
      return cells.snapshot(rundownId, snapshotId, cueIds, columnIds, max);
    },
    encodedSnapshotCells: async (_ctx, rundownId, snapshotId, cueIds, columnIds, max) => {
      const { items, total } = await cells.snapshot(rundownId, snapshotId, cueIds, columnIds, max, false);
      return Buffer.from(SnapshotCellsResponse.encode({ items: items.map((c) => ({ ...c, created_at: undefined, updated_at: undefined })), total }).finish());
    },
  };
  rundown = domainOf(rundownDb, cellsPort);
  coordinates = rundown.coordinates;
});

afterAll(async () => {
  await rundownDb?.destroy();
  await cellsDb?.destroy();
});

const ctx = (teamId: string): CallerContext => ({ requestId: 'req_medium', teamId, role: 'OWNER' });

const input = (title: string) => ({
  title,
  timezone: null,
  start_time: null,
  status: undefined,
  settings: undefined,
  columns: [{ name: 'S' }],
  cues: [{ fields: { type: 'cue' as const, title: 'one' }, cells: [{ column_name: 'S', content: { html: '<b>bold</b>' } }], children: [] }],
});

const storedFor = async (rundownId: string) => (await cellsDb.query('SELECT cue_id FROM cells.cells WHERE rundown_id = $1', [rundownId])) as unknown[];
const stagedFor = async (rundownId: string) => (await cellsDb.query('SELECT 1 FROM cells.staged_rundowns WHERE rundown_id = $1', [rundownId])) as unknown[];

describe('cells of a rundown create', () => {
  it('are stored before the rundown commits and confirmed after; the rundown and its cells read as one snapshot', async () => {
    const team = `team_cells_${Date.now()}`;
    const { result: rundown } = await rundownsFor(cellsPort).create(ctx(team), input('whole'));
    expect(await storedFor(rundown.id)).toHaveLength(1);
    expect(await stagedFor(rundown.id)).toHaveLength(0);
    const read = await coordinates.readWithCells(ctx(team), rundown.id);
    expect(read.cells.map((c) => c.content_html)).toEqual(['<b>bold</b>']);
    expect(read.cues.map((c) => c.id)).toEqual([read.cells[0]!.cue_id]);
  });

  it('left behind by a create that died after staging (compensation impossible too) are collected; a live rundown keeps its cells', async () => {
    const team = `team_cells_orphan_${Date.now()}`;
    let staged = '';
    // The rundown side fails after the cells were stored, and cannot reach the cells side to undo it.
    const dying: CellsPort = {
      ...cellsPort,
      writeForNewRundown: async (c, rundownId, items) => {
        await cellsPort.writeForNewRundown(c, rundownId, items);
        staged = rundownId;
        throw new Error('the rundown service died after staging');
      },
      deleteRundownCells: () => Promise.reject(new Error('cells service unreachable')),
    };
    await expect(rundownsFor(dying).create(ctx(team), input('dies'))).rejects.toThrow('died after staging');
    expect(await storedFor(staged)).toHaveLength(1);
    await expect(coordinates.describe(ctx(team), staged, { cueIds: [], columnIds: [], allCues: true, allColumns: true })).rejects.toMatchObject({ code: 'rundowns.not_found' });

    // A live rundown whose confirmation was lost keeps its cells through the collector.
    const unconfirmed: CellsPort = { ...cellsPort, confirmNewRundown: () => Promise.reject(new Error('lost')) };
    const { result: live } = await rundownsFor(unconfirmed).create(ctx(team), input('lives'));
    expect(await stagedFor(live.id)).toHaveLength(1);

    await new Promise((r) => setTimeout(r, 1_100));
    const collected = await cells.collectOrphans(1);
    expect(collected.removed).toBeGreaterThanOrEqual(1);
    expect(await storedFor(staged)).toHaveLength(0);
    expect(await stagedFor(staged)).toHaveLength(0);
    expect(await storedFor(live.id)).toHaveLength(1);
    expect(await stagedFor(live.id)).toHaveLength(0);
  });
});

/** A rundown with text columns A, B, C and cues: three `cue`s, a heading, a group with one child cue. */
async function layout(team: string) {
  const { result } = await rundown.rundowns.create(ctx(team), {
    ...input('writes'),
    columns: [{ name: 'A' }, { name: 'B' }, { name: 'C' }],
    cues: [
      ...['one', 'two', 'three'].map((title) => ({ fields: { type: 'cue' as const, title }, cells: [], children: [] })),
      { fields: { type: 'heading' as const, title: 'head' }, cells: [], children: [] },
      { fields: { type: 'group' as const, title: 'grp' }, cells: [], children: [{ fields: { type: 'cue' as const, title: 'child' }, cells: [], children: [] }] },
    ],
  });
  const { cues } = await rundown.cues.list(ctx(team), result.id);
  return { id: result.id, columns: result.column_order, cues: cues.map((c) => ({ id: c.id, type: c.type })) };
}

const text = (cue_id: string, column_id: string, value: string) => ({ cue_id, column_id, content: { text: value } });

describe('cell writes (the cells domain asking the rundown domain)', () => {
  it('refuses a heading or a group (cells.invalid_cue_type, with cue_id and cue_type), in a batch too', async () => {
    const team = `team_cells_type_${Date.now()}`;
    const r = await layout(team);
    const heading = r.cues.find((c) => c.type === 'heading')!;
    const group = r.cues.find((c) => c.type === 'group')!;
    await expect(cells.write(ctx(team), r.id, [text(heading.id, r.columns[0]!, 'x')])).rejects.toMatchObject({ code: 'cells.invalid_cue_type', details: { cue_id: heading.id, cue_type: 'heading' } });
    await expect(cells.write(ctx(team), r.id, [text(r.cues[0]!.id, r.columns[0]!, 'fine'), text(group.id, r.columns[0]!, 'x')])).rejects.toMatchObject({
      code: 'cells.invalid_cue_type',
      details: { cue_id: group.id, cue_type: 'group' },
    });
    expect((await cells.get(ctx(team), r.id, r.cues[0]!.id, r.columns[0]!)).content).toBe('');
  });

  it('refuses select, image and attachment columns (cells.unsupported_column_type, with supported); reads of them are empty cells', async () => {
    const team = `team_cells_coltype_${Date.now()}`;
    const r = await layout(team);
    for (const type of ['select', 'image', 'attachment']) {
      const { result: column } = await rundown.columns.adminCreate(r.id, { name: `c-${type}`, type, private: false });
      await expect(cells.write(ctx(team), r.id, [text(r.cues[0]!.id, column.id, 'x')])).rejects.toMatchObject({
        code: 'cells.unsupported_column_type',
        details: { column_id: column.id, column_type: type, supported: ['text'] },
      });
      expect(await cells.get(ctx(team), r.id, r.cues[0]!.id, column.id)).toMatchObject({ content: '', created_at: null });
    }
  });

  it('refuses a locked cue (cells.prevent_edits, with cue_id) for one item and for the whole batch; unlocked, it is written', async () => {
    const team = `team_cells_lock_${Date.now()}`;
    const r = await layout(team);
    const locked = r.cues[1]!.id;
    await rundown.cues.setPreventEdits(r.id, locked, true);
    await expect(cells.write(ctx(team), r.id, [text(locked, r.columns[0]!, 'x')])).rejects.toMatchObject({ code: 'cells.prevent_edits', details: { cue_id: locked } });
    await expect(cells.write(ctx(team), r.id, [text(r.cues[2]!.id, r.columns[2]!, 'not written'), text(locked, r.columns[0]!, 'x')])).rejects.toMatchObject({ code: 'cells.prevent_edits' });
    expect((await cells.get(ctx(team), r.id, r.cues[2]!.id, r.columns[2]!)).content).toBe('');
    await rundown.cues.setPreventEdits(r.id, locked, false);
    expect(await cells.write(ctx(team), r.id, [text(locked, r.columns[0]!, 'x')])).toMatchObject([{ cue_id: locked, content: 'x' }]);
  });

  it('names each repeated coordinate with its indexes (cells.duplicate_coordinate); nothing is written', async () => {
    const team = `team_cells_dup_${Date.now()}`;
    const r = await layout(team);
    const a = { cue_id: r.cues[2]!.id, column_id: r.columns[0]! };
    const b = { cue_id: r.cues[2]!.id, column_id: r.columns[1]! };
    const batch = [
      { ...a, content: { text: '1' } },
      { ...b, content: { text: '2' } },
      { ...a, content: { text: '3' } },
      { ...b, content: { html: '<b>4</b>' } },
      { ...a, content: { text: '5' } },
    ];
    const refused = (await cells.write(ctx(team), r.id, batch).catch((e: unknown) => e)) as { code: string; details: { duplicates: unknown } };
    expect(refused.code).toBe('cells.duplicate_coordinate');
    expect(refused.details.duplicates).toEqual([
      { ...a, indexes: [0, 2, 4] },
      { ...b, indexes: [1, 3] },
    ]);
    expect((await cells.get(ctx(team), r.id, a.cue_id, a.column_id)).content).toBe('');
  });

  it('is all-or-nothing: a missing cue (cues.not_found) refuses the batch; a good batch writes every item in order', async () => {
    const team = `team_cells_all_${Date.now()}`;
    const r = await layout(team);
    const good = r.columns.map((column_id, i) => text(r.cues[0]!.id, column_id, `v${i}`));
    await expect(cells.write(ctx(team), r.id, [...good, text('cue_missing', r.columns[0]!, 'x')])).rejects.toMatchObject({ code: 'cues.not_found' });
    for (const g of good) expect((await cells.get(ctx(team), r.id, g.cue_id, g.column_id)).content).toBe('');
    expect((await cells.write(ctx(team), r.id, good)).map((c) => c.content)).toEqual(['v0', 'v1', 'v2']);
  });

  it('writes a full batch of 500 rich-text cells, sanitized, twice (insert, then replace)', async () => {
    const team = `team_cells_full_${Date.now()}`;
    const { result } = await rundown.rundowns.create(ctx(team), {
      ...input('full batch'),
      columns: Array.from({ length: 10 }, (_, i) => ({ name: `c${i}` })),
      cues: Array.from({ length: 50 }, (_, i) => ({ fields: { type: 'cue' as const, title: `q${i}` }, cells: [], children: [] })),
    });
    const { cues } = await rundown.cues.list(ctx(team), result.id);
    for (const round of [1, 2]) {
      const items = cues.flatMap((c, i) =>
        result.column_order.map((column_id, j) => ({
          cue_id: c.id,
          column_id,
          content: { html: `<p><strong>${round}:${i}:${j}</strong> <span style="color:#d33">x</span> <rs-mention data-id="m${j}">N</rs-mention><script>alert(1)</script></p><ul><li>a</li></ul>` },
        })),
      );
      const written = await cells.write(ctx(team), result.id, items);
      expect(written).toHaveLength(500);
      expect(written[0]!.content_html).toBe(`<p><strong>${round}:0:0</strong> <span style="color:#d33">x</span> <rs-mention data-id="m0">N</rs-mention></p><ul><li>a</li></ul>`);
      expect(written[499]!.content_html).toContain(`${round}:49:9`);
    }
    const [stored] = (await cellsDb.query('SELECT count(*)::int AS n FROM cells.cells WHERE rundown_id = $1', [result.id])) as { n: number }[];
    expect(stored!.n).toBe(500);
  });
});
