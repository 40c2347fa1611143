import { AppError, checkBulkSize, lengthIssues, limits, looksLikeId, newId, textLimits } from '@rundown/shared';
import type { MentionsRepository } from '../repositories/mentions.js';
import type { Reach, RundownAccess } from './access.js';
import { duplicatesBy } from './duplicates.js';
import { only, type WriteResult } from './side-effects.js';
import type { MentionRow, MentionValues } from './model.js';

/** Fields of a create, PATCH or bulk item; absent ones keep their value (or default, on create). */
export interface MentionFields {
  name?: string;
  color?: string;
  description?: string;
}

/** A batch item: with an id it changes that mention, without one it creates a mention. */
export interface MentionItem {
  id?: string;
  fields: MentionFields;
}

/** A mention created without a colour gets this one (the record's `color` is always a string). */
export const DEFAULT_MENTION_COLOR = '#ffffff';

/**
 * Mentions of a rundown: names unique per rundown, at most `limits.mentionsPerRundown`. Create,
 * PATCH and bulk are one operation (apply a batch, then check the resulting set), so they
 * answer the same errors for the same faults.
 */
export class MentionsService {
  constructor(
    private readonly access: RundownAccess,
    private readonly repo: MentionsRepository,
  ) {}

  async list(reach: Reach, rundownId: string): Promise<MentionRow[]> {
    await this.access.read(reach, rundownId);
    return this.repo.all(this.access.db, rundownId);
  }

  async get(reach: Reach, rundownId: string, id: string): Promise<MentionRow> {
    await this.access.read(reach, rundownId);
    const mention = looksLikeId(id) ? await this.repo.find(this.access.db, rundownId, id) : undefined;
    if (!mention) throw notFound(rundownId, id);
    return mention;
  }

  async create(reach: Reach, rundownId: string, fields: MentionFields): Promise<WriteResult<MentionRow>> {
    checkLengths([{ fields }]);
    const [created] = await this.apply(reach, rundownId, [{ fields }]);
    return only(created!);
  }

  async update(reach: Reach, rundownId: string, id: string, fields: MentionFields): Promise<WriteResult<MentionRow>> {
    if (!Object.keys(fields).length) throw new AppError('mentions.empty_patch');
    checkLengths([{ fields }]);
    const [updated] = await this.apply(reach, rundownId, [{ id, fields }]);
    return only(updated!);
  }

  async bulk(reach: Reach, rundownId: string, items: MentionItem[]): Promise<WriteResult<MentionRow[]>> {
    checkBulkSize(items.length, 'mentions');
    checkLengths(items, ['items']);
    const duplicates = duplicatesBy(items, (i) => i.id);
    if (duplicates.length) {
      throw new AppError('mentions.duplicate_id', { details: { duplicates: duplicates.map((d) => ({ id: d.key, indexes: d.indexes })) } });
    }
    return only(await this.apply(reach, rundownId, items));
  }

  async delete(reach: Reach, rundownId: string, id: string): Promise<WriteResult<null>> {
    await this.access.write(reach, rundownId, async (tx, _rundown, emit) => {
      if (!looksLikeId(id) || !(await this.repo.remove(tx, rundownId, id))) throw notFound(rundownId, id);
      emit({ kind: 'mention', change: 'removed', id });
    });
    return only(null);
  }

  /** Applies the items in order, all or nothing; answers the written mentions in item order. */
  private apply(reach: Reach, rundownId: string, items: MentionItem[]): Promise<MentionRow[]> {
    return this.access.write(reach, rundownId, async (tx, _rundown, emit) => {
      const current = new Map((await this.repo.all(tx, rundownId)).map((m) => [m.id, m]));
      const next = new Map<string, MentionValues>([...current].map(([id, m]) => [id, m]));
      const created: MentionValues[] = [];
      const ids = items.map((item) => {
        const before = item.id === undefined ? undefined : next.get(item.id);
        if (item.id !== undefined && !before) throw notFound(rundownId, item.id);
        const name = item.fields.name ?? before?.name;
        if (name === undefined) {
          throw AppError.validation('mentions.invalid_payload', [{ path: ['name'], message: 'A new mention needs a name.', code: 'invalid_type' }]);
        }
        const values: MentionValues = {
          id: before?.id ?? newId('mnt'),
          name,
          color: item.fields.color ?? before?.color ?? DEFAULT_MENTION_COLOR,
          description: item.fields.description ?? before?.description ?? '',
        };
        if (!before) created.push(values);
        next.set(values.id, values);
        return values.id;
      });
      if (next.size > limits.mentionsPerRundown) {
        throw new AppError('mentions.too_many', { details: { rundown_id: rundownId, max: limits.mentionsPerRundown } });
      }
      const [clash] = duplicatesBy([...next.values()], (m) => m.name);
      if (clash) throw new AppError('mentions.name_conflict', { details: { rundown_id: rundownId, name: clash.key } });
      const updated = await this.repo.update(tx, rundownId, ids.filter((id) => current.has(id)).map((id) => next.get(id)!));
      const inserted = await this.repo.insert(tx, rundownId, created);
      emit(
        ...updated.map((m) => ({ kind: 'mention' as const, change: 'updated' as const, id: m.id, record: m })),
        ...inserted.map((m) => ({ kind: 'mention' as const, change: 'created' as const, id: m.id, record: m })),
      );
      const written = new Map(current);
      for (const row of [...updated, ...inserted]) written.set(row.id, row);
      return ids.map((id) => written.get(id)!);
    });
  }
}

function notFound(rundownId: string, mentionId: string): AppError {
  return new AppError('mentions.not_found', { details: { rundown_id: rundownId, mention_id: mentionId } });
}

/** Names and descriptions fit the limits table (a single write's issue has no path prefix; a bulk's names its item). */
function checkLengths(items: Pick<MentionItem, 'fields'>[], path?: string[]): void {
  const issues = items.flatMap((item, index) => lengthIssues(item.fields, textLimits.mention, path ? [...path, index] : []));
  if (issues.length) throw AppError.validation('mentions.invalid_payload', issues);
}
