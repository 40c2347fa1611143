import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDataSource, type CallerContext } from '@rundown/shared';
import type { DataSource } from 'typeorm';
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
let rundownDb: DataSource;
let cellsDb: DataSource;
let cells: CellsService;
let coordinates: CoordinatesService;
let rundownsFor: (port: CellsPort) => RundownsService;
let cellsPort: CellsPort;

beforeAll(async () => {
  cellsDb = await createDataSource({ url: inject('databaseUrl'), schema: 'cells', migrations: [], applicationName: 'medium-cells' }).initialize();
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
  coordinates = domainOf(rundownDb, cellsPort).coordinates;
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
