import { columnTypeNames, cueTypeNames, rundownStatusNames, skippedByNames, todDisplayFormatNames } from '@rundown/shared';
import type { Column } from '@rundown/shared/proto/rundown/rundown/v1/columns';
import type { Cue } from '@rundown/shared/proto/rundown/rundown/v1/cues';
import type { Mention } from '@rundown/shared/proto/rundown/rundown/v1/mentions';
import type { OutputMessage } from '@rundown/shared/proto/rundown/rundown/v1/output_message_record';
import type { CueOrderNode, Rundown } from '@rundown/shared/proto/rundown/rundown/v1/rundown';
import { RundownField, type SideEffect } from '@rundown/shared/proto/rundown/rundown/v1/side_effects';
import type { TextVariable } from '@rundown/shared/proto/rundown/rundown/v1/text_variables';

/**
 * Proto messages → the JSON records of docs/api-decisions.md#records (nulls explicit, empty children omitted): the one
 * mapping per resource in the gateway. Nothing is decided here: every value comes from the service.
 */
function cueOrder(nodes: CueOrderNode[]): { id: string; children?: { id: string }[] }[] {
  return nodes.map((n) => (n.children.length ? { id: n.id, children: n.children.map((c) => ({ id: c.id })) } : { id: n.id }));
}

/** `skip` is written by clients (extension), so it reads back too; `skipped_by` says what takes effect. */
export function cueJson(c: Cue) {
  return {
    id: c.id,
    type: cueTypeNames.fromProto(c.type)!,
    title: c.title,
    subtitle: c.subtitle,
    duration_ms: c.duration_ms,
    background_color: c.background_color ?? null,
    start_time: c.start_time ?? null,
    prevent_edits: c.prevent_edits,
    skip: c.skip,
    skipped_by: skippedByNames.fromProto(c.skipped_by) ?? null,
    parent_id: c.parent_id ?? null,
    auto_advance: c.auto_advance,
    scheduled: c.scheduled,
    created_at: iso(c.created_at),
    updated_at: iso(c.updated_at),
  };
}

/** Audit stamps are ISO 8601 strings in JSON (docs/api-decisions.md#envelope); a record always carries them. */
export const iso = (at: Date | undefined) => at!.toISOString();

const rundownFieldNames: Record<number, string> = {
  [RundownField.RUNDOWN_FIELD_CUE_ORDER]: 'cue_order',
  [RundownField.RUNDOWN_FIELD_END_TIME]: 'end_time',
};

/** A side effect as `meta.side_effects` lists it (docs/api-decisions.md#envelope): `{ type, ... }`. */
export function sideEffectJson({ effect }: SideEffect): { type: string; [key: string]: unknown } {
  switch (effect?.$case) {
    case 'rundown_changed': {
      const { rundown_id, changed, column_order } = effect.value;
      return {
        type: 'rundown.changed',
        rundown_id,
        ...(changed.length ? { changed: changed.map((f) => rundownFieldNames[f] ?? 'unknown') } : {}),
        ...(column_order ? { column_order: column_order.ids } : {}),
      };
    }
    case 'column_deleted':
      return { type: 'column.deleted', ...effect.value };
    case 'output_message_changed':
      return { type: 'output_message.changed', rundown_id: effect.value.rundown_id, output_message: outputMessageJson(effect.value.output_message!) };
    case undefined:
      throw new Error('a side effect without a case');
  }
}

export const sideEffectsJson = (effects: SideEffect[]) => effects.map(sideEffectJson);

export function columnJson(c: Column) {
  return { id: c.id, name: c.name, type: columnTypeNames.fromProto(c.type)!, created_at: iso(c.created_at), updated_at: iso(c.updated_at) };
}

export function mentionJson(m: Mention) {
  return { id: m.id, name: m.name, color: m.color, description: m.description, created_at: iso(m.created_at), updated_at: iso(m.updated_at) };
}

export function textVariableJson(v: TextVariable) {
  return { key: v.key, value: v.value, created_at: iso(v.created_at), updated_at: iso(v.updated_at) };
}

export function outputMessageJson(m: OutputMessage) {
  return { text: m.text, visible: m.visible, color: m.color, bold: m.bold, underline: m.underline, updated_at: m.updated_at ? m.updated_at.toISOString() : null };
}

export function rundownJson(r: Rundown) {
  return {
    id: r.id,
    title: r.title,
    timezone: r.timezone ?? null,
    start_time: r.start_time ?? null,
    end_time: r.end_time ?? null,
    status: rundownStatusNames.fromProto(r.status)!,
    settings: {
      cue_numbering: r.settings!.cue_numbering!,
      tod_display_format: todDisplayFormatNames.fromProto(r.settings!.tod_display_format) ?? null,
    },
    cue_order: cueOrder(r.cue_order),
    column_order: r.column_order,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}
