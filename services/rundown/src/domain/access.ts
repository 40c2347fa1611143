import type { CallerContext } from '@rundown/shared';
import type { EntityManager } from 'typeorm';
import type { RundownRow, RundownsRepository } from '../repositories/rundowns.js';
import { scopeOf, type RundownsService } from './rundowns.js';

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
  ) {}

  read(reach: Reach, rundownId: string, tx?: EntityManager): Promise<RundownRow> {
    return this.find(reach, rundownId, tx, false);
  }

  /**
   * Runs a content write in one transaction that first locks the rundown row, so concurrent
   * writes to one rundown serialize: orders stay permutations and caps cannot be overrun.
   */
  write<T>(reach: Reach, rundownId: string, work: (tx: EntityManager, rundown: RundownRow) => Promise<T>): Promise<T> {
    return this.repo.transaction(async (tx) => work(tx, await this.find(reach, rundownId, tx)));
  }

  private find(reach: Reach, id: string, tx?: EntityManager, forUpdate = tx !== undefined): Promise<RundownRow> {
    return this.rundowns.findVisible(reach === 'admin' ? 'admin' : scopeOf(reach), id, tx, forUpdate);
  }
}
