import type { OutputMessagesRepository } from '../repositories/output-messages.js';
import { AppError, lengthIssues, textLimits } from '@rundown/shared';
import type { Reach, RundownAccess } from './access.js';
import type { WriteResult } from './side-effects.js';
import type { OutputMessageRow, OutputMessageValues } from './model.js';
import type { OutputMessageRecord } from './model.js';


/** What a rundown's message reads as before anyone wrote it. */
export const defaultOutputMessage: OutputMessageValues = { text: '', visible: false, color: '#ffffff', bold: false, underline: false };

const fields = Object.keys(defaultOutputMessage) as (keyof OutputMessageValues)[];

/** The one output message of a rundown. */
export class OutputMessageService {
  constructor(
    private readonly access: RundownAccess,
    private readonly repo: OutputMessagesRepository,
  ) {}

  async get(reach: Reach, rundownId: string): Promise<OutputMessageRecord> {
    await this.access.read(reach, rundownId);
    return orDefault(await this.repo.find(this.access.db, rundownId));
  }

  /** Applies the patch; only a patch that gives some field a new value writes (and reports `output_message.changed`). */
  async update(reach: Reach, rundownId: string, patch: Partial<OutputMessageValues>): Promise<WriteResult<OutputMessageRecord>> {
    if (!fields.some((f) => patch[f] !== undefined)) throw new AppError('messages.empty_patch');
    const tooLong = lengthIssues(patch, textLimits.outputMessage);
    if (tooLong.length) throw AppError.validation('messages.invalid_payload', tooLong);
    return this.access.write(reach, rundownId, async (tx, _rundown, emit) => {
      const current = orDefault(await this.repo.find(tx, rundownId));
      const changed = fields.some((f) => patch[f] !== undefined && patch[f] !== current[f]);
      if (!changed) return { result: current, side_effects: [] };
      const next: OutputMessageValues = {
        text: patch.text ?? current.text,
        visible: patch.visible ?? current.visible,
        color: patch.color ?? current.color,
        bold: patch.bold ?? current.bold,
        underline: patch.underline ?? current.underline,
      };
      const message = await this.repo.save(tx, rundownId, next);
      emit({ kind: 'output_message', change: 'updated', record: message });
      return { result: message, side_effects: [{ type: 'output_message.changed', rundown_id: rundownId, output_message: message }] };
    });
  }
}

function orDefault(row: OutputMessageRow | undefined): OutputMessageRecord {
  return row ?? { ...defaultOutputMessage, updated_at: null };
}
