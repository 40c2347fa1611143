import { AppError, type CallerContext } from '@rundown/shared';
import type { EntityManager } from 'typeorm';
import type { RundownRow, RundownsRepository } from '../repositories/rundowns.js';
import { scopeOf, type Scope } from './rundowns.js';

type Db = RundownsRepository['db'] | EntityManager;

/** The rundown `id` if the scope can see it (another team's or another rundown's is simply not found). */
export async function visibleRundown(repo: RundownsRepository, db: Db, scope: Scope, id: string, forUpdate = false): Promise<RundownRow> {
  if (scope.rundownId && scope.rundownId !== id) throw new AppError('rundowns.not_found');
  const row = await repo.find(db, scope.teamId, id, forUpdate);
  if (!row) throw new AppError('rundowns.not_found');
  return row;
}

/**
 * Who reaches a rundown's content: a caller (team and token scope apply) or the admin surface,
 * which has no team and may reach any live rundown by id. Only the admin RPCs pass `admin`.
 */
export type Reach = CallerContext | 'admin';

/** Entry point of every content read and write of a rundown. */
export class RundownAccess {
  constructor(readonly repo: RundownsRepository) {}

  read(reach: Reach, rundownId: string): Promise<RundownRow> {
    return this.find(this.repo.db, reach, rundownId, false);
  }

  /**
   * Runs a content write in one transaction that first locks the rundown row, so concurrent
   * writes to one rundown serialize: orders stay permutations and caps cannot be overrun.
   */
  write<T>(reach: Reach, rundownId: string, work: (tx: EntityManager, rundown: RundownRow) => Promise<T>): Promise<T> {
    return this.repo.transaction(async (tx) => work(tx, await this.find(tx, reach, rundownId, true)));
  }

  private async find(db: Db, reach: Reach, id: string, forUpdate: boolean): Promise<RundownRow> {
    if (reach !== 'admin') return visibleRundown(this.repo, db, scopeOf(reach), id, forUpdate);
    const row = await this.repo.findById(db, id, forUpdate);
    if (!row) throw new AppError('rundowns.not_found');
    return row;
  }
}
