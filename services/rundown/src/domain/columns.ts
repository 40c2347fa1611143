import { AppError, lengthIssues, limits, newId, textLimits, type Db } from '@rundown/shared';
import type { ColumnsRepository } from '../repositories/columns.js';
import type { Emit, Reach, RundownAccess } from './access.js';
import type { CellsPort } from './cells-port.js';
import type { FactVersions } from './fact-versions.js';
import { placeColumn, reorderColumns, reorderProblem, type ColumnPosition } from './column-order.js';
import type { SideEffect, WriteResult } from './side-effects.js';
import type { ColumnRow, RundownRow } from './model.js';

/** `rundown.changed` with the new public order, when a write moved it. */
const orderEffect = (rundownId: string, changed: boolean, layout: Layout): SideEffect[] =>
  changed ? [{ type: 'rundown.changed', rundown_id: rundownId, column_order: publicOrder(layout) }] : [];

export type ColumnType = ColumnRow['type'];
const columnTypes: readonly string[] = ['text', 'select', 'image', 'attachment'] satisfies ColumnType[];
const isColumnType = (type: string): type is ColumnType => columnTypes.includes(type);

export type ColumnWrite = WriteResult<ColumnRow>;

/** The columns of one rundown as the write sees them (under the rundown lock). */
interface Layout {
  order: string[];
  byId: Map<string, ColumnRow>;
}

const isPublic = (layout: Layout, id: string) => layout.byId.get(id)?.private === false;
const publicOrder = (layout: Layout) => layout.order.filter((id) => isPublic(layout, id));
const sameOrder = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((id, i) => id === b[i]);

/**
 * Columns of a rundown. The rundown row's `column_ids` is the one authority on order (private
 * columns included); callers see and address only public columns, and create only text ones.
 */
export class ColumnsService {
  constructor(
    private readonly access: RundownAccess,
    private readonly repo: ColumnsRepository,
    private readonly cells: CellsPort,
    private readonly versions: FactVersions,
  ) {}

  async list(reach: Reach, rundownId: string): Promise<ColumnRow[]> {
    const rundown = await this.access.read(reach, rundownId);
    const layout = await this.layout(this.access.db, rundown);
    return publicOrder(layout).map((id) => layout.byId.get(id)!);
  }

  async get(reach: Reach, rundownId: string, columnId: string): Promise<ColumnRow> {
    const rundown = await this.access.read(reach, rundownId);
    return this.publicColumn(await this.layout(this.access.db, rundown), rundownId, columnId);
  }

  create(reach: Reach, rundownId: string, input: { name: string } & ColumnPosition): Promise<ColumnWrite> {
    return this.insert(reach, rundownId, { name: input.name, type: 'text', private: false }, input);
  }

  /** The admin surface's create: any type, private or public (appended). */
  async adminCreate(rundownId: string, input: { name: string; type: string; private: boolean }): Promise<ColumnWrite> {
    const { type } = input;
    if (!isColumnType(type)) {
      throw AppError.validation('columns.invalid_payload', [{ path: ['type'], message: `Unknown column type "${type}".`, code: 'invalid_value' }]);
    }
    return this.insert('admin', rundownId, { name: input.name, type, private: input.private }, {});
  }

  /** A PATCH renames (the name is required: without it, `columns.empty_patch`) and may move the column. */
  async update(reach: Reach, rundownId: string, columnId: string, patch: { name?: string | undefined } & ColumnPosition): Promise<ColumnWrite> {
    const { name } = patch;
    if (name === undefined) throw new AppError('columns.empty_patch');
    const input = { ...patch, name };
    return this.access.write(reach, rundownId, async (tx, rundown, emit) => {
      const layout = await this.layout(tx, rundown);
      const column = this.publicColumn(layout, rundownId, columnId);
      checkName(layout, input.name, columnId);
      const positioned = input.before_column_id !== undefined || input.after_column_id !== undefined;
      const order = positioned ? placeColumn(layout.order, columnId, this.checkPosition(layout, input)) : layout.order;
      const renamed = await this.repo.rename(tx, columnId, input.name);
      if (renamed) emit({ kind: 'column', change: 'updated', id: columnId, record: renamed });
      const changed = await this.saveOrder(tx, rundown, layout, order, emit);
      return { result: renamed ?? column, side_effects: orderEffect(rundownId, changed, { ...layout, order }) };
    });
  }

  async delete(reach: Reach, rundownId: string, columnId: string): Promise<WriteResult<null>> {
    const column_order = await this.access.write(reach, rundownId, async (tx, rundown, emit) => {
      const layout = await this.layout(tx, rundown);
      this.publicColumn(layout, rundownId, columnId);
      const order = layout.order.filter((id) => id !== columnId);
      await this.repo.remove(tx, columnId);
      emit({ kind: 'column', change: 'removed', id: columnId });
      await this.saveOrder(tx, rundown, layout, order, emit);
      return publicOrder({ ...layout, order });
    });
    // Committed; before the answer (and before the cascade), so cell reads stop seeing the column.
    await this.versions.changed(rundownId, ['layout']);
    // Outside the rundown lock, so a slow cells service never stalls other writes; the column is
    // gone for good, so its cells are unreachable whatever happens here.
    const cell_count = await this.cells.deleteColumnCells(rundownId, columnId);
    return {
      result: null,
      side_effects: [
        { type: 'column.deleted', rundown_id: rundownId, column_id: columnId, cell_count },
        { type: 'rundown.changed', rundown_id: rundownId, column_order },
      ],
    };
  }

  reorder(reach: Reach, rundownId: string, columnIds: string[]): Promise<WriteResult<ColumnRow[]>> {
    return this.access.write(reach, rundownId, async (tx, rundown, emit) => {
      const layout = await this.layout(tx, rundown);
      const problem = reorderProblem(publicOrder(layout), columnIds);
      if (problem) throw new AppError('columns.invalid_reorder', { details: problem });
      const order = reorderColumns(layout.order, (id) => !isPublic(layout, id), columnIds);
      const changed = await this.saveOrder(tx, rundown, layout, order, emit);
      return { result: columnIds.map((id) => layout.byId.get(id)!), side_effects: orderEffect(rundownId, changed, { ...layout, order }) };
    });
  }

  private async insert(
    reach: Reach,
    rundownId: string,
    input: { name: string; type: ColumnType; private: boolean },
    position: ColumnPosition,
  ): Promise<ColumnWrite> {
    const written = await this.access.write(reach, rundownId, async (tx, rundown, emit) => {
      const layout = await this.layout(tx, rundown);
      if (layout.order.length + 1 > limits.columnsPerRundown) {
        throw new AppError('columns.too_many', {
          details: { limit: limits.columnsPerRundown, received: layout.order.length + 1, unit: 'columns' },
        });
      }
      const checked = this.checkPosition(layout, position);
      checkName(layout, input.name);
      const id = newId('col');
      const [column] = await this.repo.insert(tx, [{ id, rundown_id: rundownId, ...input }]);
      const order = placeColumn(layout.order, id, checked);
      const after: Layout = { order, byId: new Map(layout.byId).set(id, column!) };
      // A private column exists for the admin surface only: no event names it.
      if (!input.private) emit({ kind: 'column', change: 'created', id, record: column! });
      await this.saveOrder(tx, rundown, after, order, input.private ? undefined : emit, true);
      return { result: column!, side_effects: orderEffect(rundownId, !input.private, after) };
    });
    // A public column is a new coordinate for cells; a private one is not among the facts at all.
    if (!input.private) await this.versions.changed(rundownId, ['layout']);
    return written;
  }

  private async layout(db: Db, rundown: RundownRow): Promise<Layout> {
    const rows = await this.repo.all(db, rundown.id);
    return { order: rundown.column_ids, byId: new Map(rows.map((c) => [c.id, c])) };
  }

  /** The column, unless it is missing or private (a private column does not exist for callers). */
  private publicColumn(layout: Layout, rundownId: string, columnId: string): ColumnRow {
    if (!isPublic(layout, columnId)) throw new AppError('columns.not_found', { details: { rundown_id: rundownId, column_id: columnId } });
    return layout.byId.get(columnId)!;
  }

  /** The position with its target checked (only a public column can be a neighbour). */
  private checkPosition(layout: Layout, { before_column_id, after_column_id }: ColumnPosition): ColumnPosition {
    if (before_column_id !== undefined && after_column_id !== undefined) {
      throw AppError.validation('columns.invalid_payload', [
        { path: ['after_column_id'], message: 'Give at most one of before_column_id and after_column_id.', code: 'custom' },
      ]);
    }
    const [field, target] = before_column_id !== undefined ? ['before_column_id', before_column_id] : ['after_column_id', after_column_id];
    if (target !== undefined && !isPublic(layout, target)) {
      throw new AppError('columns.invalid_position', {
        detail: `No public column "${target}" in the rundown to place the column next to.`,
        details: { [field]: target },
      });
    }
    return { before_column_id, after_column_id };
  }

  /**
   * Stores the order when it changed (`force`: always) and, when `emit` is given, reports the
   * rundown's new state (its public `column_order`) as a `rundown` event.
   */
  private async saveOrder(tx: Db, rundown: RundownRow, layout: Layout, order: string[], emit?: Emit, force = false): Promise<boolean> {
    if (!force && sameOrder(layout.order, order)) return false;
    await this.access.saveColumnOrder(tx, rundown.id, order);
    if (emit) emit({ kind: 'rundown', change: 'updated', id: rundown.id, record: await this.access.record(tx, rundown.id) });
    return true;
  }
}

/** Names fit the limits table and are unique among all of a rundown's columns, private ones included (the layout holds them all). */
function checkName(layout: Layout, name: string, exceptId?: string): void {
  const tooLong = lengthIssues({ name }, textLimits.column);
  if (tooLong.length) throw AppError.validation('columns.invalid_payload', tooLong);
  for (const column of layout.byId.values()) {
    if (column.name === name && column.id !== exceptId) {
      throw AppError.validation('columns.invalid_payload', [
        { path: ['name'], message: `A column named "${name}" already exists in the rundown.`, code: 'custom' },
      ]);
    }
  }
}
