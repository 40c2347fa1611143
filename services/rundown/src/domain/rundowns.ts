import { AppError, limits, newId, plans, type CallerContext } from '@rundown/shared';
import type { EntityManager } from 'typeorm';
import type { CueTreeNode, RundownRow, RundownsRepository } from '../repositories/rundowns.js';
import type { CursorCodec } from './cursor.js';
import { defaultSettings, mergeSettings, type Settings } from './settings.js';

export interface RundownRecord {
  id: string;
  title: string;
  timezone: string | null;
  start_time: number | null;
  end_time: number | null;
  status: string;
  settings: Settings;
  cue_order: CueTreeNode[];
  column_order: string[];
  created_at: string;
  updated_at: string;
}

export interface CreateRundownInput {
  title: string;
  timezone: string | null;
  start_time: number | null;
  status: string | undefined;
  settings: Record<string, unknown> | undefined;
  columns: { name: string }[];
}

export interface UpdateRundownInput {
  title?: string;
  timezone?: string | null;
  start_time?: number | null;
  status?: string;
  settings?: Record<string, unknown>;
}

/** Who may see what: a team sees its rundowns; a rundown-scoped token sees only its rundown. */
export interface Scope {
  teamId: string;
  rundownId: string | undefined;
}

export function scopeOf(ctx: CallerContext): Scope {
  if (!ctx.teamId) throw new AppError('rundowns.not_found');
  return { teamId: ctx.teamId, rundownId: ctx.tokenRundownId };
}

export class RundownsService {
  constructor(
    private readonly repo: RundownsRepository,
    private readonly cursors: CursorCodec,
  ) {}

  async create(ctx: CallerContext, input: CreateRundownInput): Promise<RundownRecord> {
    const scope = scopeOf(ctx);
    if (scope.rundownId) throw new AppError('forbidden', { detail: 'A rundown-scoped token cannot create rundowns.' });
    const maxRundowns = ctx.maxRundowns ?? plans.free.maxRundowns;
    const id = newId('rd');
    const columns = input.columns.map((c) => ({ id: newId('col'), rundown_id: id, name: c.name, type: 'text' as const, private: false }));
    if (columns.length > limits.columnsPerRundown) {
      throw new AppError('columns.too_many', {
        details: { limit: limits.columnsPerRundown, received: columns.length, unit: 'columns' },
      });
    }
    await this.repo.transaction(async (tx) => {
      await this.repo.lockTeam(tx, scope.teamId);
      const live = await this.repo.countLive(tx, scope.teamId);
      if (live + 1 > maxRundowns) {
        throw new AppError('plan.limit_exceeded', {
          detail: `The team’s plan allows ${maxRundowns} rundowns.`,
          details: { limit: maxRundowns, received: live + 1, unit: 'rundowns', resource: 'rundowns' },
        });
      }
      await this.repo.insert(tx, {
        id,
        team_id: scope.teamId,
        title: input.title,
        timezone: input.timezone,
        start_time: input.start_time,
        status: input.status ?? 'draft',
        settings: input.settings ? mergeSettings(defaultSettings(), input.settings) : defaultSettings(),
        column_ids: columns.map((c) => c.id),
      });
      await this.repo.insertColumns(tx, columns);
    });
    return this.get(ctx, id);
  }

  async get(ctx: CallerContext, id: string, tx?: EntityManager): Promise<RundownRecord> {
    const row = await this.findVisible(scopeOf(ctx), id, tx);
    const hidden = await this.repo.privateColumnIds(tx ?? this.repoDb(), [row.id]);
    return toRecord(row, hidden);
  }

  async update(ctx: CallerContext, id: string, patch: UpdateRundownInput): Promise<RundownRecord> {
    if (!Object.keys(patch).length) throw new AppError('rundowns.empty_patch');
    const scope = scopeOf(ctx);
    return this.repo.transaction(async (tx) => {
      const row = await this.findVisible(scope, id, tx, true);
      const { settings, ...rest } = patch;
      await this.repo.update(tx, id, { ...rest, ...(settings ? { settings: mergeSettings(row.settings, settings) } : {}) });
      return this.get(ctx, id, tx);
    });
  }

  async list(ctx: CallerContext, limit: number, cursor: string | undefined): Promise<{ items: RundownRecord[]; next_cursor: string | null }> {
    const scope = scopeOf(ctx);
    const cursorScope = `rundowns:${scope.teamId}:${scope.rundownId ?? '*'}`;
    let after: { created_key: string; id: string } | undefined;
    if (cursor) {
      const position = this.cursors.decode(cursorScope, cursor);
      if (typeof position.t !== 'string' || typeof position.i !== 'string' || !/^\d{4}-\d\d-\d\dT[\d:.]+$/.test(position.t)) {
        throw new AppError('cursor.invalid');
      }
      after = { created_key: position.t, id: position.i };
    }
    // One extra row tells whether another page exists without a count query.
    const rows = await this.repo.page(scope.teamId, limit + 1, after, scope.rundownId);
    const page = rows.slice(0, limit);
    const hidden = await this.repo.privateColumnIds(this.repoDb(), page.map((r) => r.id));
    const last = page.at(-1);
    return {
      items: page.map((r) => toRecord(r, hidden)),
      next_cursor: rows.length > limit && last ? this.cursors.encode(cursorScope, { t: last.created_key, i: last.id }) : null,
    };
  }

  async delete(ctx: CallerContext, id: string): Promise<void> {
    const scope = scopeOf(ctx);
    if (scope.rundownId && scope.rundownId !== id) throw new AppError('rundowns.not_found');
    if (!(await this.repo.softDelete(scope.teamId, id))) throw new AppError('rundowns.not_found');
  }

  /** A rundown the scope may see; `forUpdate` takes the row lock every content write starts with. */
  async findVisible(scope: Scope, id: string, tx?: EntityManager, forUpdate = false): Promise<RundownRow> {
    if (scope.rundownId && scope.rundownId !== id) throw new AppError('rundowns.not_found');
    const row = await this.repo.find(tx ?? this.repoDb(), scope.teamId, id, forUpdate);
    if (!row) throw new AppError('rundowns.not_found');
    return row;
  }

  private repoDb() {
    return this.repo.db;
  }
}

export function toRecord(row: RundownRow, hiddenColumns: Set<string>): RundownRecord {
  return {
    id: row.id,
    title: row.title,
    timezone: row.timezone,
    start_time: row.start_time,
    end_time: row.start_time === null ? null : row.start_time + row.playable_duration_ms,
    status: row.status,
    settings: row.settings,
    cue_order: row.cue_tree,
    column_order: row.column_ids.filter((id) => !hiddenColumns.has(id)),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
