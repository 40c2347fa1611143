import { AppError, type CallerContext, type Db } from '@rundown/shared';
import type { CuesRepository } from '../repositories/cues.js';
import { CueDraft, type BulkItem, type CreateCueInput, type PatchCueInput } from './cue-draft.js';
import type { ReorderItem } from './cue-tree.js';
import type { RundownAccess } from './access.js';
import type { CellsPort } from './cells-port.js';
import type { DomainEvent } from './events.js';
import type { FactVersions } from './fact-versions.js';
import type { SideEffect, WriteResult } from './side-effects.js';
import type { Transactions } from './transactions.js';
import type { RundownsService } from './rundowns.js';
import type { RundownRow, CueRecord, RundownRecord } from './model.js';

export type { SideEffect, WriteResult } from './side-effects.js';

/**
 * Cue rules over storage: every write locks the rundown row first (so concurrent edits of one
 * rundown serialize), applies its operations to a draft of the whole cue set, checks the cap, and
 * writes rows, order and playable total together in that transaction.
 *
 * Decisions the specification leaves open:
 * - The lock (`prevent_edits`) refuses every write to the cue itself: PATCH, a bulk item patching it
 *   (the whole batch is refused) and DELETE, each with 423 `cues.prevent_edits` naming `cue_id`.
 *   A reorder of the rundown is not an edit of the cue and may move it.
 * - A reorder lists children after their group in body order; they need not be contiguous.
 * - A concurrent write that lost the race sees the winner's state: a stale reorder gets
 *   `cues.invalid_reorder` (missing/unknown ids), a patch of a deleted cue `cues.not_found`.
 */
export class CuesService {
  constructor(
    private readonly transactions: Transactions,
    private readonly rundowns: RundownsService,
    private readonly access: RundownAccess,
    private readonly repo: CuesRepository,
    private readonly cells: CellsPort,
    private readonly versions: FactVersions,
  ) {}

  /** The rundown and its cues (display order) from one snapshot. */
  async list(ctx: CallerContext, rundownId: string): Promise<{ rundown: RundownRecord; cues: CueRecord[] }> {
    return this.transactions.snapshot(async (tx) => {
      const rundown = await this.rundowns.get(ctx, rundownId, tx);
      const draft = new CueDraft(rundownId, rundown.cue_order, await this.repo.all(tx, rundownId));
      return { rundown, cues: draft.records() };
    });
  }

  async get(ctx: CallerContext, rundownId: string, cueId: string): Promise<CueRecord> {
    const { cues } = await this.list(ctx, rundownId);
    const cue = cues.find((c) => c.id === cueId);
    if (!cue) throw new AppError('cues.not_found', { details: { rundown_id: rundownId, cue_id: cueId } });
    return cue;
  }

  /** With an id the rundown already has, a retry of a create that was applied: see `CueDraft.create`. */
  create(ctx: CallerContext, rundownId: string, input: CreateCueInput): Promise<WriteResult<CueRecord>> {
    return this.write(ctx, rundownId, (draft) => draft.create(input), (draft, id) => draft.record(id));
  }

  update(ctx: CallerContext, rundownId: string, input: PatchCueInput): Promise<WriteResult<CueRecord>> {
    return this.write(ctx, rundownId, (draft) => draft.patch(input), (draft, id) => draft.record(id));
  }

  delete(ctx: CallerContext, rundownId: string, cueId: string): Promise<WriteResult<null>> {
    return this.write(ctx, rundownId, (draft) => draft.delete(cueId), () => null);
  }

  /** Items apply in order; any failure refuses the whole batch. Answers each item's cue as the batch leaves it. */
  bulk(ctx: CallerContext, rundownId: string, items: BulkItem[]): Promise<WriteResult<CueRecord[]>> {
    return this.write(ctx, rundownId, (draft) => draft.apply(items), (draft, ids) => ids.map((id) => draft.record(id)));
  }

  reorder(ctx: CallerContext, rundownId: string, items: ReorderItem[]): Promise<WriteResult<CueRecord[]>> {
    return this.write(ctx, rundownId, (draft) => draft.reorder(items), (draft) => draft.records());
  }

  /** The admin surface only: stands in for the human who toggles the lock in the rundown screen. */
  async setPreventEdits(rundownId: string, cueId: string, value: boolean): Promise<CueRecord> {
    const record = await this.access.write('admin', rundownId, async (tx, { cue_tree: order }, emit) => {
      if (!(await this.repo.setPreventEdits(tx, rundownId, cueId, value))) {
        throw new AppError('cues.not_found', { details: { rundown_id: rundownId, cue_id: cueId } });
      }
      const record = new CueDraft(rundownId, order, await this.repo.all(tx, rundownId)).record(cueId);
      emit({ kind: 'cue', change: 'updated', id: cueId, record });
      return record;
    });
    // The lock is a layout fact (the cells service must not take a write to this cue from its cache)
    // and part of the cue's record in the runner's order.
    await this.versions.changed(rundownId, ['layout', 'order']);
    return record;
  }

  /** The frame of every cue write. `answer` runs after the rows are stored, so records carry the database timestamps. */
  private async write<T, R>(
    ctx: CallerContext,
    rundownId: string,
    work: (draft: CueDraft) => T,
    answer: (draft: CueDraft, worked: T) => R,
  ): Promise<WriteResult<R>> {
    let deleted: string[] = [];
    let layoutChanged = false;
    const written = await this.access.write(ctx, rundownId, async (tx, rundown, emit) => {
      const draft = new CueDraft(rundownId, rundown.cue_tree, await this.repo.all(tx, rundownId));
      const worked = work(draft);
      draft.checkCap();
      await this.persist(tx, draft);
      deleted = draft.deleted;
      layoutChanged = draft.layoutChanged();
      emit(...cueEvents(draft));
      if (draft.orderChanged() || draft.playableChanged()) {
        emit({ kind: 'rundown', change: 'updated', id: rundownId, record: await this.access.record(tx, rundownId) });
      }
      return { result: answer(draft, worked), side_effects: sideEffects(rundown, draft) };
    });
    // Committed; before the answer, so a cell read or a show action that follows it sees the cues as
    // they are now (every cue write is a change of the runner's order: the cues' records are in it).
    await this.versions.changed(rundownId, layoutChanged ? ['layout', 'order'] : ['order']);
    // A deleted cue's cells are unreachable already; removing them is storage hygiene.
    if (deleted.length) await this.cells.deleteCueCells(rundownId, deleted).catch(() => undefined);
    return written;
  }

  private async persist(tx: Db, draft: CueDraft): Promise<void> {
    const { created, changed } = draft.pending();
    await this.repo.delete(tx, draft.rundownId, draft.deleted);
    draft.adopt(await this.repo.insert(tx, draft.rundownId, created));
    draft.adopt(await this.repo.update(tx, draft.rundownId, changed));
    if (draft.orderChanged() || draft.playableChanged()) {
      await this.access.saveCueOrder(tx, draft.rundownId, draft.tree.toNodes(), draft.playableMs());
    }
  }
}

/**
 * One event per cue the write removed, created or changed, and `reordered` for each cue a reorder
 * moved (new parent or new predecessor) without changing it. A create or patch that places a cue
 * reports that cue only; the rundown's `updated` event carries the whole new order.
 */
function cueEvents(draft: CueDraft): DomainEvent[] {
  const { created, changed } = draft.pending();
  const written = new Set([...created, ...changed].map((r) => r.id));
  return [
    ...draft.deleted.map((id): DomainEvent => ({ kind: 'cue', change: 'removed', id })),
    ...created.map((r): DomainEvent => ({ kind: 'cue', change: 'created', id: r.id, record: draft.record(r.id) })),
    ...changed.map((r): DomainEvent => ({ kind: 'cue', change: 'updated', id: r.id, record: draft.record(r.id) })),
    ...draft
      .moved()
      .filter((id) => !written.has(id))
      .map((id): DomainEvent => ({ kind: 'cue', change: 'reordered', id, record: draft.record(id) })),
  ];
}

function sideEffects(rundown: RundownRow, draft: CueDraft): SideEffect[] {
  const changed: ('cue_order' | 'end_time')[] = [];
  if (draft.orderChanged()) changed.push('cue_order');
  if (draft.playableChanged() && rundown.start_time !== null) changed.push('end_time');
  return changed.length ? [{ type: 'rundown.changed', rundown_id: rundown.id, changed }] : [];
}
