import type { Cue, SideEffect } from '@rundown/shared/proto/rundown/rundown/v1/cues';
import type { CueOrderNode, Rundown } from '@rundown/shared/proto/rundown/rundown/v1/rundown';

/** Proto messages → the JSON records of CONTRACT §2 (nulls explicit, empty children omitted). */
function cueOrder(nodes: CueOrderNode[]): { id: string; children?: { id: string }[] }[] {
  return nodes.map((n) => (n.children.length ? { id: n.id, children: n.children.map((c) => ({ id: c.id })) } : { id: n.id }));
}

/** `skip` is written by clients (extension), so it reads back too; `skipped_by` says what takes effect. */
export function cueJson(c: Cue) {
  return {
    id: c.id,
    type: c.type,
    title: c.title,
    subtitle: c.subtitle,
    duration_ms: c.duration_ms,
    background_color: c.background_color ?? null,
    start_time: c.start_time ?? null,
    prevent_edits: c.prevent_edits,
    skip: c.skip,
    skipped_by: c.skipped_by ?? null,
    parent_id: c.parent_id ?? null,
    auto_advance: c.auto_advance,
    scheduled: c.scheduled,
    created_at: c.created_at,
    updated_at: c.updated_at,
  };
}

export function sideEffectJson(e: SideEffect) {
  return { type: e.type, rundown_id: e.rundown_id, changed: e.changed };
}

export function rundownJson(r: Rundown) {
  return {
    id: r.id,
    title: r.title,
    timezone: r.timezone ?? null,
    start_time: r.start_time ?? null,
    end_time: r.end_time ?? null,
    status: r.status,
    settings: {
      cue_numbering: r.settings?.cue_numbering ?? { start_from: 1, prefix: '', padding: 1 },
      tod_display_format: r.settings?.tod_display_format ?? null,
    },
    cue_order: cueOrder(r.cue_order),
    column_order: r.column_order,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}
