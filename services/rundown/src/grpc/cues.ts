import { AppError, bindService, cueTypeNames, type ServiceBinding } from '@rundown/shared';
import {
  CueServiceService,
  type CreateCue,
  type CueType as CueTypeMessage,
  type PatchCue,
  type Position as PositionMessage,
} from '@rundown/shared/proto/rundown/rundown/v1/cues';
import type { CueFields, PatchCueInput, CreateCueInput, BulkItem } from '../domain/cue-draft.js';
import type { Position } from '../domain/cue-tree.js';
import type { CuesService } from '../domain/cues.js';
import { cueMessage, sideEffectMessages as effectMessages } from './messages.js';
import type { CueType } from '../domain/model.js';

function cueType(value: CueTypeMessage | undefined): CueType | undefined {
  if (value === undefined) return undefined;
  const name = cueTypeNames.fromProto(value);
  if (!name) throw AppError.validation('cues.invalid_payload', [{ path: ['type'], message: `Unknown cue type ${value}.`, code: 'invalid_value' }]);
  return name;
}

function position(p: PositionMessage | undefined): Position | undefined {
  const target = p?.target;
  switch (target?.$case) {
    case undefined:
      return undefined;
    case 'before_cue_id':
      return { kind: 'before', cueId: target.value };
    case 'after_cue_id':
      return { kind: 'after', cueId: target.value };
    case 'start':
    case 'end':
      return { kind: target.$case, group: null };
    case 'start_of_group':
      return { kind: 'start', group: target.value };
    case 'end_of_group':
      return { kind: 'end', group: target.value };
  }
}

/** Proto presence → domain fields: only what was given. */
function fields(m: CreateCue | PatchCue, nullable: { background_color: boolean; start_time: boolean }): CueFields {
  const out: CueFields = {};
  const type = cueType(m.type);
  if (type) out.type = type;
  if (m.title !== undefined) out.title = m.title;
  if (m.subtitle !== undefined) out.subtitle = m.subtitle;
  if (m.duration_ms !== undefined) out.duration_ms = m.duration_ms;
  if (nullable.background_color) out.background_color = m.background_color ?? null;
  if (nullable.start_time) out.start_time = m.start_time ?? null;
  if (m.skip !== undefined) out.skip = m.skip;
  if (m.auto_advance !== undefined) out.auto_advance = m.auto_advance;
  if (m.scheduled !== undefined) out.scheduled = m.scheduled;
  return out;
}

export function createInput(m: CreateCue): CreateCueInput {
  const pos = position(m.position);
  return {
    ...fields(m, { background_color: m.background_color !== undefined, start_time: m.start_time !== undefined }),
    ...(pos ? { position: pos } : {}),
    ...(m.id !== undefined ? { id: m.id } : {}),
  };
}

function patchInput(m: PatchCue): PatchCueInput {
  const pos = position(m.position);
  return {
    id: m.id,
    ...fields(m, { background_color: m.set_background_color, start_time: m.set_start_time }),
    ...(pos ? { position: pos } : {}),
  };
}

/** gRPC ↔ domain mapping for cues; no rules live here. */
export function cueHandlers(cues: CuesService): ServiceBinding {
  return bindService(CueServiceService, {
    listCues: async (req, ctx) => ({ items: (await cues.list(ctx, req.rundown_id)).cues.map(cueMessage) }),
    getCue: async (req, ctx) => cueMessage(await cues.get(ctx, req.rundown_id, req.cue_id)),
    createCue: async (req, ctx) => {
      const { result, side_effects } = await cues.create(ctx, req.rundown_id, createInput(req.cue ?? { position: undefined }));
      return { cue: cueMessage(result), side_effects: effectMessages(side_effects) };
    },
    updateCue: async (req, ctx) => {
      if (!req.patch) throw new AppError('cues.empty_patch');
      const { result, side_effects } = await cues.update(ctx, req.rundown_id, patchInput(req.patch));
      return { cue: cueMessage(result), side_effects: effectMessages(side_effects) };
    },
    deleteCue: async (req, ctx) => ({ side_effects: effectMessages((await cues.delete(ctx, req.rundown_id, req.cue_id)).side_effects) }),
    bulkCues: async (req, ctx) => {
      const items = req.items.map((item, index): BulkItem => {
        switch (item.op?.$case) {
          case 'create':
            return { create: createInput(item.op.value) };
          case 'patch':
            return { patch: patchInput(item.op.value) };
          default:
            throw AppError.validation('cues.invalid_payload', [{ path: ['items', index], message: 'An item is a create or a patch.', code: 'custom' }]);
        }
      });
      const { result, side_effects } = await cues.bulk(ctx, req.rundown_id, items);
      return { items: result.map(cueMessage), side_effects: effectMessages(side_effects) };
    },
    reorderCues: async (req, ctx) => {
      const items = req.items.map((i) => ({ id: i.id, parent_id: i.parent_id ?? null }));
      const { result, side_effects } = await cues.reorder(ctx, req.rundown_id, items);
      return { items: result.map(cueMessage), side_effects: effectMessages(side_effects) };
    },
  });
}
