import type { CallerContext } from '@rundown/shared';
import type { EntityManager } from 'typeorm';
import type { RundownRow, RundownsRepository } from '../repositories/rundowns.js';
import type { DomainEvent, EventLog } from './events.js';
import { scopeOf, toRecord, type RundownRecord, type RundownsService } from './rundowns.js';

/** Records the events of a write; they are committed with it. */
export type Emit = (...events: DomainEvent[]) => void;

/**
 * Who reaches a rundown's content: a caller (team and token scope apply) or the admin surface,
 * which has no team and may reach any live rundown by id. Only the admin RPCs pass `admin`.
 */
export type Reach = CallerContext | 'admin';

/** Entry point of every content read and write of a rundown. */
export class RundownAccess {
  constructor(
    private readonly rundowns: RundownsService,
    readonly repo: RundownsRepository,
    private readonly events: EventLog,
  ) {}

  read(reach: Reach, rundownId: string, tx?: EntityManager): Promise<RundownRow> {
    return this.find(reach, rundownId, tx, false);
  }

  /**
   * Runs a content write in one transaction that first locks the rundown row, so concurrent
   * writes to one rundown serialize: orders stay permutations and caps cannot be overrun. What
   * the work emits goes to the event log last, in the same transaction (and, thanks to the row
   * lock, in commit order).
   */
  write<T>(reach: Reach, rundownId: string, work: (tx: EntityManager, rundown: RundownRow, emit: Emit) => Promise<T>): Promise<T> {
    return this.repo.transaction(async (tx) => {
      const rundown = await this.find(reach, rundownId, tx);
      const events: DomainEvent[] = [];
      const result = await work(tx, rundown, (...more) => void events.push(...more));
      await this.events.record(tx, rundown, events);
      return result;
    });
  }

  /** The rundown as clients read it, inside a write (after its changes, before its commit). */
  async record(tx: EntityManager, rundownId: string): Promise<RundownRecord> {
    return toRecord((await this.repo.find(tx, undefined, rundownId))!);
  }

  private find(reach: Reach, id: string, tx?: EntityManager, forUpdate = tx !== undefined): Promise<RundownRow> {
    return this.rundowns.findVisible(reach === 'admin' ? 'admin' : scopeOf(reach), id, tx, forUpdate);
  }
}
