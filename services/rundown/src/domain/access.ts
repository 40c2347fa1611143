import type { CallerContext, Db } from '@rundown/shared';
import type { RundownsRepository } from '../repositories/rundowns.js';
import type { DomainEvent, EventLog } from './events.js';
import type { Transactions } from './transactions.js';
import { scopeOf, toRecord, type CueTreeNode, type RundownRecord, type RundownRow, type Scope } from './model.js';

/** Records the events of a write; they are committed with it. */
export type Emit = (...events: DomainEvent[]) => void;

/**
 * Who reaches a rundown's content: a caller (team and token scope apply) or the admin surface,
 * which has no team and may reach any live rundown by id. Only the admin RPCs pass `admin`.
 */
export type Reach = CallerContext | 'admin';

/** How access finds a live rundown a scope may see (the rundowns service's `findVisible`). */
export interface VisibleRundowns {
  findVisible(scope: Scope | 'admin', id: string, tx?: Db, forUpdate?: boolean): Promise<RundownRow>;
}

/** Entry point of every content read and write of a rundown. */
export class RundownAccess {
  constructor(
    private readonly transactions: Transactions,
    private readonly rundowns: VisibleRundowns,
    private readonly repo: RundownsRepository,
    private readonly events: EventLog,
  ) {}

  /** The pool, for reads outside a write. */
  get db(): Db {
    return this.transactions.db;
  }

  read(reach: Reach, rundownId: string): Promise<RundownRow> {
    return this.find(reach, rundownId);
  }

  /**
   * Runs a content write in one transaction that first locks the rundown row, so concurrent
   * writes to one rundown serialize: orders stay permutations and caps cannot be overrun. What
   * the work emits goes to the event log last, in the same transaction (and, thanks to the row
   * lock, in commit order).
   */
  write<T>(reach: Reach, rundownId: string, work: (tx: Db, rundown: RundownRow, emit: Emit) => Promise<T>): Promise<T> {
    return this.transactions.run(async (tx) => {
      const rundown = await this.find(reach, rundownId, tx);
      const events: DomainEvent[] = [];
      const result = await work(tx, rundown, (...more) => void events.push(...more));
      await this.events.record(tx, rundown, events);
      return result;
    });
  }

  /** The rundown as clients read it, inside a write (after its changes, before its commit). */
  async record(tx: Db, rundownId: string): Promise<RundownRecord> {
    return toRecord((await this.repo.find(tx, undefined, rundownId))!);
  }

  /** The rundown row's cue tree and playable total, inside a write. */
  saveCueOrder(tx: Db, rundownId: string, order: CueTreeNode[], playableMs: number): Promise<void> {
    return this.repo.saveCueOrder(tx, rundownId, order, playableMs);
  }

  /** The rundown row's column order (private columns included), inside a write. */
  saveColumnOrder(tx: Db, rundownId: string, columnIds: string[]): Promise<void> {
    return this.repo.saveColumnOrder(tx, rundownId, columnIds);
  }

  private find(reach: Reach, id: string, tx?: Db): Promise<RundownRow> {
    return this.rundowns.findVisible(reach === 'admin' ? 'admin' : scopeOf(reach), id, tx, tx !== undefined);
  }
}
