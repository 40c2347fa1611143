import { mentionJson, outputMessageJson, textVariableJson, timingJson as sharedTimingJson, columnTypeNames, countdownParts, deliveryStateNames, cueTypeNames, playEndNames, remainingMs, rundownStatusNames, runnerPhaseNames, skippedByNames, todDisplayFormatNames, type StoredRunnerStatus } from '@rundown/shared/core';
import type { Cell } from '@rundown/shared/proto/rundown/cells/v1/cells';
import type { Column, ColumnWriteResponse } from '@rundown/shared/proto/rundown/rundown/v1/columns';
import type { Cue } from '@rundown/shared/proto/rundown/rundown/v1/cues';
import type { CueOrderNode, Rundown } from '@rundown/shared/proto/rundown/rundown/v1/rundown';
import { RundownField, type SideEffect } from '@rundown/shared/proto/rundown/rundown/v1/side_effects';
import type { Delivery, Endpoint } from '@rundown/shared/proto/rundown/webhooks/v1/webhooks';
import type { ActResponse, Report, SideEffect as SideEffectMessage, Status, Timing } from '@rundown/shared/proto/rundown/runner/v1/runner';
import type { ReportJson, TimingJson } from './schemas/timing.js';

/**
 * The gateway's wire mappers: proto messages → the JSON records of docs/api-decisions.md#records (nulls
 * explicit, empty children omitted), the runner's status, countdown, timing and report, the side effects:
 * the one mapping per resource, used by the routes, SSE, MCP and the admin listener. Nothing is decided
 * here: every value comes from the service.
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
export interface SideEffectJson {
  type: string;
  [key: string]: unknown;
}

/** A rundown service's side effect as `meta.side_effects` lists it. */
export function sideEffectJson({ effect }: SideEffect): SideEffectJson {
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

/** The mention, text variable and output message records: the shared library's, which the §7 event data carries too. */
export { mentionJson, outputMessageJson, textVariableJson };

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

export function cellJson(c: Cell) {
  return {
    cue_id: c.cue_id,
    column_id: c.column_id,
    content: c.content,
    content_html: c.content_html,
    created_at: c.created_at?.toISOString() ?? null,
    updated_at: c.updated_at?.toISOString() ?? null,
  };
}

type PhaseName = (typeof runnerPhaseNames.names)[number];

/** The status object of docs/api-decisions.md#runner, as every display reads it. */
export interface StatusJson {
  server_time: number;
  state: 'running' | 'paused' | 'stopped';
  active_cue: { id: string; title: string; started_at: number; paused_at: number | null; duration_ms: number } | null;
  next_cue: { id: string; title: string } | null;
  phase: PhaseName;
  revision: number;
}

/** The same object from the read model, clocked now. */
export function storedStatusJson(s: StoredRunnerStatus, serverTime: number): StatusJson {
  const a = s.phase === 'running' ? s.active_cue : null;
  return {
    server_time: serverTime,
    state: !a ? 'stopped' : a.paused_at !== null ? 'paused' : 'running',
    active_cue: a ? { id: a.id, title: a.title, started_at: a.started_at, paused_at: a.paused_at, duration_ms: a.duration_ms } : null,
    next_cue: s.next_cue ? { id: s.next_cue.id, title: s.next_cue.title } : null,
    phase: s.phase,
    revision: s.revision,
  };
}

export function statusJson(s: Status, serverTime = s.server_time): StatusJson {
  const phase = runnerPhaseNames.fromProto(s.phase) ?? 'pre-show';
  const a = phase === 'running' ? s.active_cue : undefined;
  return {
    server_time: serverTime,
    state: !a ? 'stopped' : a.paused_at !== undefined ? 'paused' : 'running',
    active_cue: a ? { id: a.id, title: a.title, started_at: a.started_at, paused_at: a.paused_at ?? null, duration_ms: a.duration_ms } : null,
    next_cue: s.next_cue ? { id: s.next_cue.id, title: s.next_cue.title } : null,
    phase,
    revision: s.revision,
  };
}

/** The countdown of the active cue (docs/api-decisions.md#runner); the arithmetic is the shared `countdown.ts`. */
export function countdownJson(status: StatusJson) {
  const a = status.active_cue;
  if (!a) return { state: status.state, server_time: status.server_time, active_cue: null };
  const remaining = remainingMs(a, status.server_time);
  return {
    state: status.state,
    server_time: status.server_time,
    active_cue: {
      cue_id: a.id,
      title: a.title,
      duration_ms: a.duration_ms,
      remaining_ms: remaining,
      remaining: countdownParts(remaining),
    },
  };
}

function runnerSideEffectJson(rundownId: string, m: SideEffectMessage): SideEffectJson {
  const e = m.effect;
  switch (e?.$case) {
    case 'timesnap':
      return {
        type: 'runner.timesnap',
        rundown_id: rundownId,
        running: e.value.running,
        cue_id: e.value.cue_id ?? null,
        kickoff: e.value.kickoff ?? null,
        deadline: e.value.deadline ?? null,
        last_stop: e.value.last_stop ?? null,
      };
    case 'active_cue_changed':
      return { type: 'runner.active_cue_changed', rundown_id: rundownId, cue_id: e.value.cue_id ?? null, previous_cue_id: e.value.previous_cue_id ?? null };
    case 'next_cue_changed':
      return { type: 'runner.next_cue_changed', rundown_id: rundownId, cue_id: e.value.cue_id ?? null, previous_cue_id: e.value.previous_cue_id ?? null };
    case 'retimed':
      return { type: 'runner.retimed', rundown_id: rundownId, cue_id: e.value.cue_id, duration_ms: e.value.duration_ms, delta_ms: e.value.delta_ms };
    default:
      return { type: 'runner.unknown', rundown_id: rundownId };
  }
}

export function actReply(rundownId: string, r: ActResponse) {
  return { data: statusJson(r.status!), sideEffects: r.side_effects.map((e) => runnerSideEffectJson(rundownId, e)) };
}

export const orNull = (v: number | undefined): number | null => v ?? null;

/** The timing object of docs/api-decisions.md#timing (also the `data` of the SSE `timing` frame): the shared mapper, typed by the route's schema. */
export const timingJson = (t: Timing): TimingJson => sharedTimingJson(t);

export function reportJson(r: Report): ReportJson {
  const t = r.totals;
  return {
    id: r.id || null,
    rundown_id: r.rundown_id,
    phase: runnerPhaseNames.fromProto(r.phase) ?? 'pre-show',
    timezone: r.timezone ?? null,
    server_time: r.server_time,
    archived_at: orNull(r.archived_at),
    rows: r.rows.map((row) => ({
      cue_id: row.cue_id,
      title: row.title,
      play: row.play,
      planned_start: orNull(row.planned_start),
      actual_start: orNull(row.actual_start),
      actual_end: orNull(row.actual_end),
      planned_duration_ms: row.planned_duration_ms,
      actual_duration_ms: orNull(row.actual_duration_ms),
      over_under_ms: orNull(row.over_under_ms),
      ended_by: playEndNames.fromProto(row.ended_by) ?? null,
    })),
    totals: {
      planned_start: orNull(t?.planned_start),
      actual_start: orNull(t?.actual_start),
      planned_end: orNull(t?.planned_end),
      actual_end: orNull(t?.actual_end),
      planned_duration_ms: t?.planned_duration_ms ?? 0,
      actual_duration_ms: t?.actual_duration_ms ?? 0,
      paused_ms: t?.paused_ms ?? 0,
      over_under_ms: orNull(t?.over_under_ms),
      plays: t?.plays ?? 0,
    },
  };
}

/** The side effects of a column write, as the rundown service decided them (the admin routes use it too). */
export function orderChanged(_rundownId: string, write: Pick<ColumnWriteResponse, 'side_effects'>) {
  return sideEffectsJson(write.side_effects);
}

// Webhooks (endpoints and their deliveries).

/** A time that may be absent: ISO 8601, or null. */
const isoOrNull = (d: Date | undefined) => (d ? d.toISOString() : null);

export function webhookJson(e: Endpoint) {
  return {
    id: e.id,
    url: e.url,
    events: e.events,
    rundown_id: e.rundown_id ?? null,
    description: e.description,
    enabled: e.enabled,
    disabled_reason: e.disabled_reason ?? null,
    created_at: iso(e.created_at),
    updated_at: iso(e.updated_at),
  };
}

export function deliveryJson(d: Delivery) {
  return {
    id: d.id,
    event_id: d.event_id,
    type: d.type,
    state: deliveryStateNames.fromProto(d.state) ?? 'pending',
    attempts: d.attempts,
    last_status: d.last_status ?? null,
    last_error: d.last_error ?? null,
    last_response_ms: d.last_response_ms ?? null,
    next_attempt_at: isoOrNull(d.next_attempt_at),
    created_at: iso(d.created_at),
    delivered_at: isoOrNull(d.delivered_at),
  };
}

export const deliveryWithAttemptsJson = (d: Delivery) => ({
  ...deliveryJson(d),
  attempt_log: d.attempt_log.map((a) => ({ at: iso(a.at), status: a.status ?? null, error: a.error ?? null, response_ms: a.response_ms })),
});
