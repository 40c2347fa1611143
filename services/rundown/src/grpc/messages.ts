import type { Column } from '@rundown/shared/proto/rundown/rundown/v1/columns';
import type { Cue } from '@rundown/shared/proto/rundown/rundown/v1/cues';
import type { Mention } from '@rundown/shared/proto/rundown/rundown/v1/mentions';
import type { OutputMessage } from '@rundown/shared/proto/rundown/rundown/v1/output_message';
import type { CueOrderNode, Rundown } from '@rundown/shared/proto/rundown/rundown/v1/rundown';
import type { TextVariable } from '@rundown/shared/proto/rundown/rundown/v1/text_variables';
import type { CueRecord } from '../domain/cue-draft.js';
import type { OutputMessageRecord } from '../domain/output-message.js';
import type { RundownRecord } from '../domain/rundowns.js';
import type { MentionRow } from '../repositories/mentions.js';
import type { ColumnRow, CueTreeNode } from '../repositories/rundowns.js';
import type { TextVariableRow } from '../repositories/text-variables.js';

/**
 * Domain records -> proto messages: the one mapping per resource, used by the gRPC handlers and
 * by the domain events (so an event carries exactly what an RPC answers).
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
    status: r.status,
    settings: {
      cue_numbering: r.settings.cue_numbering,
      tod_display_format: r.settings.tod_display_format ?? undefined,
    },
    cue_order: treeMessage(r.cue_order),
    column_order: r.column_order,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export function cueMessage(c: CueRecord): Cue {
  return {
    id: c.id,
    type: c.type,
    title: c.title,
    subtitle: c.subtitle,
    duration_ms: c.duration_ms,
    background_color: c.background_color ?? undefined,
    start_time: c.start_time ?? undefined,
    prevent_edits: c.prevent_edits,
    skip: c.skip,
    skipped_by: c.skipped_by ?? undefined,
    parent_id: c.parent_id ?? undefined,
    auto_advance: c.auto_advance,
    scheduled: c.scheduled,
    created_at: c.created_at,
    updated_at: c.updated_at,
  };
}

export function columnMessage(c: ColumnRow): Column {
  return {
    id: c.id,
    name: c.name,
    type: c.type,
    private: c.private,
    created_at: c.created_at.toISOString(),
    updated_at: c.updated_at.toISOString(),
  };
}

export function mentionMessage(m: MentionRow): Mention {
  return {
    id: m.id,
    name: m.name,
    color: m.color,
    description: m.description,
    created_at: m.created_at.toISOString(),
    updated_at: m.updated_at.toISOString(),
  };
}

export function textVariableMessage(v: TextVariableRow): TextVariable {
  return { key: v.key, value: v.value, created_at: v.created_at.toISOString(), updated_at: v.updated_at.toISOString() };
}

export function outputMessageMessage(m: OutputMessageRecord): OutputMessage {
  return {
    text: m.text,
    visible: m.visible,
    color: m.color,
    bold: m.bold,
    underline: m.underline,
    updated_at: m.updated_at?.toISOString(),
  };
}
