import { AppError, checkBulkSize, lengthIssues, limits, textLimits } from '@rundown/shared';
import type { TextVariablesRepository } from '../repositories/text-variables.js';
import type { Reach, RundownAccess } from './access.js';
import { duplicatesBy } from './duplicates.js';
import { only, type WriteResult } from './side-effects.js';
import type { TextVariableRow } from './model.js';

export interface TextVariableInput {
  key: string;
  value: string;
}

/** Text variables of a rundown, addressed by key; at most `limits.textVariablesPerRundown`. */
export class TextVariablesService {
  constructor(
    private readonly access: RundownAccess,
    private readonly repo: TextVariablesRepository,
  ) {}

  async list(reach: Reach, rundownId: string): Promise<TextVariableRow[]> {
    await this.access.read(reach, rundownId);
    return this.repo.all(this.access.db, rundownId);
  }

  async get(reach: Reach, rundownId: string, key: string): Promise<TextVariableRow> {
    checkKey(key);
    await this.access.read(reach, rundownId);
    return (await this.repo.find(this.access.db, rundownId, key)) ?? notFound(rundownId, key);
  }

  async create(reach: Reach, rundownId: string, input: TextVariableInput): Promise<WriteResult<TextVariableRow>> {
    checkKey(input.key);
    checkValues([input]);
    return only(await this.access.write(reach, rundownId, async (tx, _rundown, emit) => {
      if (await this.repo.find(tx, rundownId, input.key)) throw new AppError('text_variables.key_exists');
      const count = (await this.repo.all(tx, rundownId)).length;
      checkCap(count + 1);
      const [created] = await this.repo.upsert(tx, rundownId, [input]);
      emit({ kind: 'text_variable', change: 'created', key: input.key, record: created! });
      return created!;
    }));
  }

  async update(reach: Reach, rundownId: string, input: TextVariableInput): Promise<WriteResult<TextVariableRow>> {
    checkKey(input.key);
    checkValues([input]);
    return only(await this.access.write(reach, rundownId, async (tx, _rundown, emit) => {
      const before = (await this.repo.find(tx, rundownId, input.key)) ?? notFound(rundownId, input.key);
      const [updated] = await this.repo.upsert(tx, rundownId, [input]);
      if (before.value !== input.value) emit({ kind: 'text_variable', change: 'updated', key: input.key, record: updated! });
      return updated!;
    }));
  }

  async delete(reach: Reach, rundownId: string, key: string): Promise<WriteResult<null>> {
    checkKey(key);
    await this.access.write(reach, rundownId, async (tx, _rundown, emit) => {
      if (!(await this.repo.remove(tx, rundownId, key))) notFound(rundownId, key);
      emit({ kind: 'text_variable', change: 'removed', key });
    });
    return only(null);
  }

  /**
   * All or nothing. `merge` sets the items and keeps the other variables; `replace` makes the
   * items the whole set. Answers the items as written, in request order.
   */
  async bulk(reach: Reach, rundownId: string, items: TextVariableInput[], replace: boolean): Promise<WriteResult<TextVariableRow[]>> {
    checkBulkSize(items.length, 'text_variables');
    const duplicates = duplicatesBy(items, (i) => i.key);
    if (duplicates.length) throw new AppError('text_variables.duplicate_key', { details: { duplicates: duplicates.map((d) => d.key) } });
    items.forEach((i) => checkKey(i.key));
    checkValues(items, ['items']);
    return only(await this.access.write(reach, rundownId, async (tx, _rundown, emit) => {
      const before = new Map((await this.repo.all(tx, rundownId)).map((v) => [v.key, v.value]));
      const keys = new Set(items.map((i) => i.key));
      if (!replace) for (const key of before.keys()) keys.add(key);
      checkCap(keys.size);
      if (replace) await this.repo.removeOthers(tx, rundownId, items.map((i) => i.key));
      const written = await this.repo.upsert(tx, rundownId, items);
      if (replace) for (const key of before.keys()) if (!keys.has(key)) emit({ kind: 'text_variable', change: 'removed', key });
      for (const row of written) {
        const previous = before.get(row.key);
        if (previous === undefined) emit({ kind: 'text_variable', change: 'created', key: row.key, record: row });
        else if (previous !== row.value) emit({ kind: 'text_variable', change: 'updated', key: row.key, record: row });
      }
      return written;
    }));
  }
}

/** A key outside the allowed characters can never exist: say so rather than "not found". */
function checkKey(key: string): void {
  if (!limits.textVariableKey.test(key)) {
    const message = 'A key is 1 to 64 characters of A-Z, a-z, 0-9 and _.';
    throw new AppError('text_variables.invalid_payload', { detail: `Invalid key "${key}": ${message}`, details: { key, message } });
  }
}

/** Values fit the limits table (a single write's issue has no path prefix; a bulk's names its item). */
function checkValues(items: TextVariableInput[], path?: string[]): void {
  const issues = items.flatMap((item, index) => lengthIssues(item, textLimits.textVariable, path ? [...path, index] : []));
  if (issues.length) throw AppError.validation('text_variables.invalid_payload', issues);
}

function checkCap(attempted: number): void {
  if (attempted > limits.textVariablesPerRundown) {
    throw new AppError('text_variables.too_many', {
      detail: `A rundown holds at most ${limits.textVariablesPerRundown} text variables; this would make ${attempted}.`,
      details: { attempted },
    });
  }
}

function notFound(rundownId: string, key: string): never {
  throw new AppError('text_variables.not_found', { details: { key, rundown_id: rundownId } });
}
