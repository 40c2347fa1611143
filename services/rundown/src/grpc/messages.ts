import { columnTypeNames, cueTypeNames, rundownStatusNames, skippedByNames, todDisplayFormatNames } from '@rundown/shared';
import type { Column } from '@rundown/shared/proto/rundown/rundown/v1/columns';
import { SkippedBy, type Cue } from '@rundown/shared/proto/rundown/rundown/v1/cues';
import type { Mention } from '@rundown/shared/proto/rundown/rundown/v1/mentions';
import type { OutputMessage } from '@rundown/shared/proto/rundown/rundown/v1/output_message_record';
import { TodDisplayFormat, type CueOrderNode, type Rundown } from '@rundown/shared/proto/rundown/rundown/v1/rundown';
import { RundownField, type SideEffect as SideEffectMessage } from '@rundown/shared/proto/rundown/rundown/v1/side_effects';
import type { TextVariable } from '@rundown/shared/proto/rundown/rundown/v1/text_variables';
import type { SideEffect } from '../domain/side-effects.js';
import type { CueRecord, OutputMessageRecord, RundownRecord, MentionRow, ColumnRow, CueTreeNode, TextVariableRow } from '../domain/model.js';

/**
 * Domain records -> proto messages: the one mapping per resource, used by the gRPC handlers and
 * by the domain events (so an event carries exactly what an RPC answers). Enums go through the
 * shared name tables; audit stamps are Timestamps; times clients do clock math on stay epoch ms.
 */
function treeMessage(nodes: CueTreeNode[]): CueOrderNode[] {
  return nodes.map((n) => ({ id: n.id, children: n.children ? treeMessage(n.children) : [] }));
}

export function rundownMessage(r: RundownRecord): Rundown {
  return {
    id: r.id,
    title: r.title,
    timezone: r.timezone ?? undefined,
    start_time: r.start_time ?? undefined,
    end_time: r.end_time ?? undefined,
    status: rundownStatusNames.toProto(r.status),
    settings: {
      cue_numbering: r.settings.cue_numbering,
      tod_display_format: r.settings.tod_display_format
        ? todDisplayFormatNames.toProto(r.settings.tod_display_format)
        : TodDisplayFormat.TOD_DISPLAY_FORMAT_UNSPECIFIED,
    },
    cue_order: treeMessage(r.cue_order),
    column_order: r.column_order,
    created_at: new Date(r.created_at),
    updated_at: new Date(r.updated_at),
  };
}

export function cueMessage(c: CueRecord): Cue {
  return {
    id: c.id,
    type: cueTypeNames.toProto(c.type),
    title: c.title,
    subtitle: c.subtitle,
    duration_ms: c.duration_ms,
    background_color: c.background_color ?? undefined,
    start_time: c.start_time ?? undefined,
    prevent_edits: c.prevent_edits,
    skip: c.skip,
    skipped_by: c.skipped_by ? skippedByNames.toProto(c.skipped_by) : SkippedBy.SKIPPED_BY_UNSPECIFIED,
    parent_id: c.parent_id ?? undefined,
    auto_advance: c.auto_advance,
    scheduled: c.scheduled,
    created_at: new Date(c.created_at),
    updated_at: new Date(c.updated_at),
  };
}

export function columnMessage(c: ColumnRow): Column {
  return {
    id: c.id,
    name: c.name,
    type: columnTypeNames.toProto(c.type),
    private: c.private,
    created_at: c.created_at,
    updated_at: c.updated_at,
  };
}

export function mentionMessage(m: MentionRow): Mention {
  return {
    id: m.id,
    name: m.name,
    color: m.color,
    description: m.description,
    created_at: m.created_at,
    updated_at: m.updated_at,
  };
}

export function textVariableMessage(v: TextVariableRow): TextVariable {
  return { key: v.key, value: v.value, created_at: v.created_at, updated_at: v.updated_at };
}

export function outputMessageMessage(m: OutputMessageRecord): OutputMessage {
  return {
    text: m.text,
    visible: m.visible,
    color: m.color,
    bold: m.bold,
    underline: m.underline,
    updated_at: m.updated_at ?? undefined,
  };
}

const rundownFields = { cue_order: RundownField.RUNDOWN_FIELD_CUE_ORDER, end_time: RundownField.RUNDOWN_FIELD_END_TIME } as const;

export function sideEffectMessage(e: SideEffect): SideEffectMessage {
  switch (e.type) {
    case 'rundown.changed':
      return {
        effect: {
          $case: 'rundown_changed',
          value: {
            rundown_id: e.rundown_id,
            changed: (e.changed ?? []).map((f) => rundownFields[f]),
            column_order: e.column_order && { ids: e.column_order },
          },
        },
      };
    case 'column.deleted':
      return { effect: { $case: 'column_deleted', value: { rundown_id: e.rundown_id, column_id: e.column_id, cell_count: e.cell_count } } };
    case 'output_message.changed':
      return {
        effect: { $case: 'output_message_changed', value: { rundown_id: e.rundown_id, output_message: outputMessageMessage(e.output_message) } },
      };
  }
}

export const sideEffectMessages = (effects: SideEffect[]): SideEffectMessage[] => effects.map(sideEffectMessage);
