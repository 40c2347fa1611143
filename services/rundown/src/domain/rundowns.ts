import { AppError, limits, looksLikeId, newId, plans, type CallerContext, type Issue } from '@rundown/shared';
import type { EntityManager } from 'typeorm';
import type { CuesRepository } from '../repositories/cues.js';
import type { CueTreeNode, RundownRow, RundownsRepository } from '../repositories/rundowns.js';
import { CueDraft, type CueFields } from './cue-draft.js';
import type { CursorCodec } from './cursor.js';
import type { EventLog } from './events.js';
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
  cues: NewCueInput[];
}

/** Cell content given with a new cue, addressed by column name. */
export interface NewCell {
  column_name: string;
  content: { text: string } | { html: string };
}

/** A cue created with its rundown; `children` only on a group. */
export interface NewCueInput {
  fields: CueFields;
  cells: NewCell[];
  children: NewCueInput[];
}

export interface CellWrite {
  cue_id: string;
  column_id: string;
  content: NewCell['content'];
}

/**
 * Where the cells given with a new rundown go. Storing cells belongs to the cells service: it will
 * implement this port with a call made inside the rundown's transaction, after the rows are
 * inserted, so a refusal there rolls the whole create back (and the cells service drops its writes
 * for a rundown whose create did not commit). Until then `pendingCellStore` stands in.
 */
export interface CellStore {
  writeForNewRundown(ctx: CallerContext, rundownId: string, cells: CellWrite[]): Promise<void>;
}

/** Stand-in until the cells service exists: cells are validated and mapped to coordinates, not stored yet. */
export const pendingCellStore: CellStore = {
  writeForNewRundown: async () => undefined,
};

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
    private readonly cues: CuesRepository,
    private readonly cells: CellStore,
    private readonly events: EventLog,
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
    const { draft, cells } = draftContent(id, input.cues, new Map(columns.map((c) => [c.name, c.id])));
    return this.repo.transaction(async (tx) => {
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
        cue_tree: draft.tree.toNodes(),
        playable_duration_ms: draft.playableMs(),
      });
      await this.repo.insertColumns(tx, columns);
      await this.cues.insert(tx, id, draft.pending().created);
      await this.cells.writeForNewRundown(ctx, id, cells);
      const created = await this.get(ctx, id, tx);
      await this.events.record(tx, { id, team_id: scope.teamId }, [{ kind: 'rundown', change: 'created', id, record: created }]);
      return created;
    });
  }

  async get(ctx: CallerContext, id: string, tx?: EntityManager): Promise<RundownRecord> {
    return toRecord(await this.findVisible(scopeOf(ctx), id, tx));
  }

  async update(ctx: CallerContext, id: string, patch: UpdateRundownInput): Promise<RundownRecord> {
    if (!Object.keys(patch).length) throw new AppError('rundowns.empty_patch');
    const scope = scopeOf(ctx);
    return this.repo.transaction(async (tx) => {
      const row = await this.findVisible(scope, id, tx, true);
      const { settings, ...rest } = patch;
      const updated = toRecord(await this.repo.update(tx, id, { ...rest, ...(settings ? { settings: mergeSettings(row.settings, settings) } : {}) }));
      await this.events.record(tx, row, [{ kind: 'rundown', change: 'updated', id, record: updated }]);
      return updated;
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
    const last = page.at(-1);
    return {
      items: page.map((r) => toRecord(r)),
      next_cursor: rows.length > limit && last ? this.cursors.encode(cursorScope, { t: last.created_key, i: last.id }) : null,
    };
  }

  async delete(ctx: CallerContext, id: string): Promise<void> {
    const scope = scopeOf(ctx);
    if (!looksLikeId(id) || (scope.rundownId && scope.rundownId !== id)) throw new AppError('rundowns.not_found');
    await this.repo.transaction(async (tx) => {
      if (!(await this.repo.softDelete(tx, scope.teamId, id))) throw new AppError('rundowns.not_found');
      await this.events.record(tx, { id, team_id: scope.teamId }, [{ kind: 'rundown', change: 'removed', id }]);
    });
  }

  /**
   * A live rundown the scope may see — `'admin'` (the admin surface only, acting for no team)
   * reaches any; `forUpdate` takes the row lock every content write starts with.
   */
  async findVisible(scope: Scope | 'admin', id: string, tx?: EntityManager, forUpdate = false): Promise<RundownRow> {
    const db = tx ?? this.repo.db;
    if (!looksLikeId(id) || (scope !== 'admin' && scope.rundownId && scope.rundownId !== id)) throw new AppError('rundowns.not_found');
    const row = await this.repo.find(db, scope === 'admin' ? undefined : scope.teamId, id, forUpdate);
    if (!row) throw new AppError('rundowns.not_found');
    return row;
  }
}

/**
 * The cues of a new rundown as a draft (same rules as any cue write, cap included) and their cells
 * as coordinates. Cells go only on cues of type `cue`, under a column of the new rundown.
 */
function draftContent(rundownId: string, cues: NewCueInput[], columnIds: Map<string, string>) {
  const draft = new CueDraft(rundownId, [], []);
  const cells: CellWrite[] = [];
  const issues: Issue[] = [];
  const add = (cue: NewCueInput, group: string | null, path: (string | number)[]) => {
    const type = cue.fields.type ?? 'cue';
    if (group !== null && type === 'group') {
      issues.push({ path: [...path, 'type'], message: 'Groups exist only at root level.', code: 'custom' });
      return;
    }
    const cueId = asRundownPayload(() => draft.create({ ...cue.fields, position: { kind: 'end', group } }, path));
    for (const cell of cue.cells) {
      const columnId = columnIds.get(cell.column_name);
      if (type !== 'cue') {
        issues.push({ path: [...path, 'cells', cell.column_name], message: `A ${type} has no cells; only cues of type "cue" do.`, code: 'custom' });
      } else if (!columnId) {
        issues.push({ path: [...path, 'cells', cell.column_name], message: `No column named "${cell.column_name}" in columns[].`, code: 'custom' });
      } else cells.push({ cue_id: cueId, column_id: columnId, content: cell.content });
    }
    if (cue.children.length && type !== 'group') {
      issues.push({ path: [...path, 'children'], message: 'Only a group has children.', code: 'custom' });
    } else cue.children.forEach((child, index) => add(child, cueId, [...path, 'children', index]));
  };
  cues.forEach((cue, index) => add(cue, null, ['cues', index]));
  if (issues.length) throw AppError.validation('rundowns.invalid_payload', issues);
  draft.checkCap();
  return { draft, cells };
}

/** A cue rule broken inside a rundown create is a fault of the rundown body. */
function asRundownPayload<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (error instanceof AppError && error.code === 'cues.invalid_payload') {
      throw new AppError('rundowns.invalid_payload', { detail: error.detail, details: error.details });
    }
    throw error;
  }
}

export function toRecord(row: RundownRow): RundownRecord {
  return {
    id: row.id,
    title: row.title,
    timezone: row.timezone,
    start_time: row.start_time,
    end_time: row.start_time === null ? null : row.start_time + row.playable_duration_ms,
    status: row.status,
    settings: row.settings,
    cue_order: row.cue_tree,
    column_order: row.public_column_ids,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
