import { AppError, couldSee, lengthIssues, limits, looksLikeId, newId, textLimits, type CallerContext, type Db, type Issue } from '@rundown/shared';
import type { ColumnsRepository } from '../repositories/columns.js';
import type { CuesRepository } from '../repositories/cues.js';
import type { RundownsRepository } from '../repositories/rundowns.js';
import { CueDraft, type CueFields } from './cue-draft.js';
import type { CursorCodec } from './cursor.js';
import type { CellContent, CellsPort, CellWrite } from './cells-port.js';
import type { EventLog } from './events.js';
import type { FactVersions } from './fact-versions.js';
import { noRecordReadModel, type RecordReadModel } from './record-read-model.js';
import type { Transactions } from './transactions.js';
import { only, type WriteResult } from './side-effects.js';
import { duplicatesBy } from './duplicates.js';
import { checkExtras, type RundownExtras } from './rundown-extras.js';
import type { MentionsRepository } from '../repositories/mentions.js';
import type { OutputMessagesRepository } from '../repositories/output-messages.js';
import type { TextVariablesRepository } from '../repositories/text-variables.js';
import { defaultSettings, mergeSettings, settingsPatchIssues, type SettingsPatch } from './settings.js';
import { defaultStatus, rundownStatuses, scopeOf, toRecord, type RundownRecord, type RundownRow, type RundownStatus, type Scope } from './model.js';


export interface CreateRundownInput {
  title: string;
  timezone: string | null;
  start_time: number | null;
  /** Checked here (one of `rundownStatuses`). */
  status: string | undefined;
  settings: SettingsPatch | undefined;
  columns: { name: string }[];
  cues: NewCueInput[];
  /** The id to give the rundown (derived from an Idempotency-Key by the gateway); absent: a fresh one. */
  id?: string;
  /** Mentions, text variables and the output message made with it (an import); absent: none. */
  extras?: RundownExtras;
}

/** Where a create stores what an import brings besides columns and cues. */
export interface ExtrasRepositories {
  mentions: MentionsRepository;
  textVariables: TextVariablesRepository;
  outputMessages: OutputMessagesRepository;
}

/** Cell content given with a new cue, addressed by column name. */
export interface NewCell {
  column_name: string;
  content: CellContent;
}

/** A cue created with its rundown; `children` only on a group. */
export interface NewCueInput {
  fields: CueFields;
  cells: NewCell[];
  children: NewCueInput[];
}

/** Plan facts, asked of their owner (the auth service), never read from what a caller sent. */
export interface PlanFacts {
  maxRundowns(teamId: string, requestId: string): Promise<number>;
}

export interface UpdateRundownInput {
  title?: string;
  timezone?: string | null;
  start_time?: number | null;
  status?: string;
  settings?: SettingsPatch;
}


export class RundownsService {
  constructor(
    private readonly transactions: Transactions,
    private readonly repo: RundownsRepository,
    private readonly cues: CuesRepository,
    private readonly columns: ColumnsRepository,
    private readonly cells: CellsPort,
    private readonly events: EventLog,
    private readonly cursors: CursorCodec,
    private readonly plan: PlanFacts,
    private readonly versions: FactVersions,
    private readonly extras: ExtrasRepositories,
    private readonly records: RecordReadModel = noRecordReadModel,
  ) {}

  async create(ctx: CallerContext, input: CreateRundownInput): Promise<WriteResult<RundownRecord>> {
    const scope = scopeOf(ctx);
    if (scope.tokenRundownId) throw new AppError('forbidden', { detail: 'A rundown-scoped token cannot create rundowns.' });
    // The cap first: 20,000 columns are too many, whatever their names (not 19,999 duplicates).
    if (input.columns.length > limits.columnsPerRundown) {
      throw new AppError('columns.too_many', {
        details: { limit: limits.columnsPerRundown, received: input.columns.length, unit: 'columns' },
      });
    }
    checkFields(input);
    const maxRundowns = await this.plan.maxRundowns(scope.teamId, ctx.requestId);
    const id = input.id ?? newId('rd');
    if (input.extras) checkExtras(input.extras, id);
    const columns = input.columns.map((c) => ({ id: newId('col'), rundown_id: id, name: c.name, type: 'text' as const, private: false }));
    const { draft, cells } = draftContent(id, input.cues, new Map(columns.map((c) => [c.name, c.id])));
    // The cells are stored by the cells service inside this transaction, before the rundown commits:
    // until it does they are unreachable (no such rundown), so a client sees the rundown whole or not
    // at all. Cells left by a create that did not commit are removed now when possible, and in any
    // case by the cells service's orphan collector (services/cells/README.md).
    // Whether this attempt stored cells: only then are the rundown's cells its own to remove. (With a
    // given id, the rundown may exist already, made by an earlier attempt: its cells are not ours.)
    const wrote = { cells: false };
    let created: WriteResult<RundownRecord> | { existing: RundownRecord };
    try {
      created = await this.createRows(ctx, scope, id, input, columns, draft, cells, maxRundowns, wrote);
    } catch (error) {
      if (wrote.cells) await this.cells.deleteRundownCells(id).catch(() => undefined);
      throw error;
    }
    if ('existing' in created) return only(created.existing);
    if (wrote.cells) await this.cells.confirmNewRundown(id).catch(() => undefined);
    return created;
  }

  private async createRows(
    ctx: CallerContext,
    scope: Scope,
    id: string,
    input: CreateRundownInput,
    columns: { id: string; rundown_id: string; name: string; type: 'text'; private: boolean }[],
    draft: CueDraft,
    cells: CellWrite[],
    maxRundowns: number,
    wrote: { cells: boolean },
  ): Promise<WriteResult<RundownRecord> | { existing: RundownRecord }> {
    return this.transactions.run(async (tx) => {
      await this.repo.lockTeam(tx, scope.teamId);
      // A given id that names a rundown of the team already: an earlier attempt of this request made
      // it (the gateway derives the id from the Idempotency-Key). Nothing is made; that rundown answers.
      if (input.id !== undefined) {
        const existing = await this.repo.find(tx, scope.teamId, id, false);
        if (existing) return { existing: toRecord(existing) };
      }
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
        status: (input.status ?? defaultStatus) as RundownStatus,
        settings: input.settings ? mergeSettings(defaultSettings(), input.settings) : defaultSettings(),
        column_ids: columns.map((c) => c.id),
        cue_tree: draft.tree.toNodes(),
        playable_duration_ms: draft.playableMs(),
      });
      await this.columns.insert(tx, columns);
      await this.cues.insert(tx, id, draft.pending().created);
      if (input.extras) await this.insertExtras(tx, id, input.extras);
      if (cells.length) wrote.cells = true;
      await this.cells.writeForNewRundown(ctx, id, cells);
      const created = await this.get(ctx, id, tx);
      await this.events.record(tx, { id, team_id: scope.teamId }, [{ kind: 'rundown', change: 'created', id, record: created }]);
      return only(created);
    });
  }

  private async insertExtras(tx: Db, id: string, extras: RundownExtras): Promise<void> {
    await this.extras.mentions.insert(tx, id, extras.mentions);
    await this.extras.textVariables.upsert(tx, id, extras.text_variables);
    if (extras.output_message) await this.extras.outputMessages.save(tx, id, extras.output_message);
  }

  async get(ctx: CallerContext, id: string, tx?: Db): Promise<RundownRecord> {
    const row = await this.findVisible(scopeOf(ctx), id, tx);
    // A committed record (not one read inside a write) fills the read model the gateway serves.
    if (!tx) this.records.read(row);
    return toRecord(row);
  }

  async update(ctx: CallerContext, id: string, patch: UpdateRundownInput): Promise<WriteResult<RundownRecord>> {
    if (!Object.keys(patch).length) throw new AppError('rundowns.empty_patch');
    checkFields(patch);
    const scope = scopeOf(ctx);
    const written = await this.transactions.run(async (tx): Promise<WriteResult<RundownRecord>> => {
      const row = await this.findVisible(scope, id, tx, true);
      const { settings, status, ...rest } = patch;
      const updated = toRecord(
        await this.repo.update(tx, id, {
          ...rest,
          ...(status !== undefined ? { status: status as RundownStatus } : {}),
          ...(settings ? { settings: mergeSettings(row.settings, settings) } : {}),
        }),
      );
      await this.events.record(tx, row, [{ kind: 'rundown', change: 'updated', id, record: updated }]);
      return { result: updated, side_effects: [{ type: 'rundown.changed', rundown_id: id }] };
    });
    // The planned start and timezone are part of the runner's order: a show action after this answer plans with them.
    if (patch.start_time !== undefined || patch.timezone !== undefined) await this.versions.changed(id, ['order']);
    return written;
  }

  async list(ctx: CallerContext, limit: number, cursor: string | undefined): Promise<{ items: RundownRecord[]; next_cursor: string | null }> {
    const scope = scopeOf(ctx);
    const cursorScope = `rundowns:${scope.teamId}:${scope.tokenRundownId ?? '*'}`;
    let after: { created_key: string; id: string } | undefined;
    if (cursor) {
      const position = this.cursors.decode(cursorScope, cursor);
      if (typeof position.t !== 'string' || typeof position.i !== 'string' || !/^\d{4}-\d\d-\d\dT[\d:.]+$/.test(position.t)) {
        throw new AppError('cursor.invalid');
      }
      after = { created_key: position.t, id: position.i };
    }
    // One extra row tells whether another page exists without a count query.
    const rows = await this.repo.page(this.transactions.db, scope.teamId, limit + 1, after, scope.tokenRundownId);
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      items: page.map((r) => toRecord(r)),
      next_cursor: rows.length > limit && last ? this.cursors.encode(cursorScope, { t: last.created_key, i: last.id }) : null,
    };
  }

  async delete(ctx: CallerContext, id: string): Promise<WriteResult<null>> {
    const scope = scopeOf(ctx);
    if (!looksLikeId(id) || !couldSee(scope, id)) throw new AppError('rundowns.not_found');
    await this.transactions.run(async (tx) => {
      if (!(await this.repo.softDelete(tx, scope.teamId, id))) throw new AppError('rundowns.not_found');
      await this.events.record(tx, { id, team_id: scope.teamId }, [{ kind: 'rundown', change: 'removed', id }]);
    });
    // Before the answer: a cells cache or a runner holding this rundown asks again, and hears rundowns.not_found.
    await this.versions.changed(id, ['layout', 'order']);
    // The cells are unreachable from here on; removing them is storage hygiene and may be retried.
    await this.cells.deleteRundownCells(id).catch(() => undefined);
    return only(null);
  }

  /**
   * A live rundown the scope may see — `'admin'` (the admin surface only, acting for no team)
   * reaches any; `forUpdate` takes the row lock every content write starts with.
   */
  async findVisible(scope: Scope | 'admin', id: string, tx?: Db, forUpdate = false): Promise<RundownRow> {
    const db = tx ?? this.transactions.db;
    if (!looksLikeId(id) || (scope !== 'admin' && !couldSee(scope, id))) throw new AppError('rundowns.not_found');
    const row = await this.repo.find(db, scope === 'admin' ? undefined : scope.teamId, id, forUpdate);
    if (!row) throw new AppError('rundowns.not_found');
    return row;
  }
}

/** The rules on a rundown's own fields (shapes are the gateway's; values are the domain's). */
function checkFields(input: { title?: string | undefined; status?: string | undefined; settings?: SettingsPatch | undefined; columns?: { name: string }[] }): void {
  const issues: Issue[] = lengthIssues(input, textLimits.rundown);
  input.columns?.forEach((column, index) => issues.push(...lengthIssues(column, textLimits.column, ['columns', index])));
  if (input.status !== undefined && !(rundownStatuses as readonly string[]).includes(input.status)) {
    issues.push({ path: ['status'], message: `Unknown status "${input.status}"; one of ${rundownStatuses.join(', ')}.`, code: 'invalid_value' });
  }
  if (input.settings) issues.push(...settingsPatchIssues(input.settings));
  // Column names are unique in a rundown (private ones included): in a create, among the given ones.
  for (const { key, indexes } of duplicatesBy(input.columns ?? [], (c) => c.name)) {
    const [first, ...rest] = indexes;
    for (const index of rest) {
      issues.push({ path: ['columns', index, 'name'], message: `Duplicate column name "${key}" (also at columns[${first}]).`, code: 'custom' });
    }
  }
  if (issues.length) throw AppError.validation('rundowns.invalid_payload', issues);
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

