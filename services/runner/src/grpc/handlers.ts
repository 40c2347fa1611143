import { AppError, bindAdminService, bindService, cueTimingStateNames, playEndNames, runnerPhaseNames, type ServiceBinding } from '@rundown/shared';
import {
  RunnerAdminServiceService,
  RunnerServiceService,
  PlayEnd as PlayEndMessage,
  type ActRequest,
  type Report as ReportMessage,
  type SideEffect as SideEffectMessage,
  type Status as StatusMessage,
  type Timing as TimingMessage,
} from '@rundown/shared/proto/rundown/runner/v1/runner';
import type { ActResult, RunnerService } from '../domain/runner.js';
import type { Action, SideEffect, Status } from '../domain/show.js';
import type { Report, Timing } from '../domain/timing.js';

function statusMessage(s: Status): StatusMessage {
  return {
    rundown_id: s.rundown_id,
    server_time: s.server_time,
    phase: runnerPhaseNames.toProto(s.phase),
    active_cue: s.active_cue ? { ...s.active_cue, paused_at: s.active_cue.paused_at ?? undefined } : undefined,
    next_cue: s.next_cue ?? undefined,
    revision: s.revision,
  };
}

const opt = <T>(v: T | null): T | undefined => v ?? undefined;

function sideEffectMessage(e: SideEffect): SideEffectMessage {
  switch (e.type) {
    case 'runner.timesnap':
      return { effect: { $case: 'timesnap', value: { running: e.running, cue_id: opt(e.cue_id), kickoff: opt(e.kickoff), deadline: opt(e.deadline), last_stop: opt(e.last_stop) } } };
    case 'runner.active_cue_changed':
      return { effect: { $case: 'active_cue_changed', value: { cue_id: opt(e.cue_id), previous_cue_id: opt(e.previous_cue_id) } } };
    case 'runner.next_cue_changed':
      return { effect: { $case: 'next_cue_changed', value: { cue_id: opt(e.cue_id), previous_cue_id: opt(e.previous_cue_id) } } };
    case 'runner.retimed':
      return { effect: { $case: 'retimed', value: { cue_id: e.cue_id, duration_ms: e.duration_ms, delta_ms: e.delta_ms } } };
  }
}

function timingMessage(t: Timing): TimingMessage {
  return {
    rundown_id: t.rundown_id,
    server_time: t.server_time,
    revision: t.revision,
    planned_start: opt(t.planned_start),
    actual_start: opt(t.actual_start),
    planned_end: opt(t.planned_end),
    projected_end: opt(t.projected_end),
    over_under_ms: opt(t.over_under_ms),
    cues: t.cues.map((c) => ({
      id: c.id,
      title: c.title,
      state: cueTimingStateNames.toProto(c.state),
      planned_start: opt(c.planned_start),
      planned_duration_ms: c.planned_duration_ms,
      actual_start: opt(c.actual_start),
      actual_duration_ms: opt(c.actual_duration_ms),
      projected_start: opt(c.projected_start),
      over_under_ms: opt(c.over_under_ms),
    })),
  };
}

function reportMessage(r: Report): ReportMessage {
  const t = r.totals;
  return {
    id: r.id ?? '',
    rundown_id: r.rundown_id,
    phase: runnerPhaseNames.toProto(r.phase),
    timezone: r.timezone ?? undefined,
    server_time: r.server_time,
    archived_at: opt(r.archived_at),
    rows: r.rows.map((row) => ({
      cue_id: row.cue_id,
      title: row.title,
      play: row.play,
      planned_start: opt(row.planned_start),
      actual_start: opt(row.actual_start),
      actual_end: opt(row.actual_end),
      planned_duration_ms: row.planned_duration_ms,
      actual_duration_ms: opt(row.actual_duration_ms),
      over_under_ms: opt(row.over_under_ms),
      ended_by: row.ended_by ? playEndNames.toProto(row.ended_by) : PlayEndMessage.PLAY_END_UNSPECIFIED,
    })),
    totals: {
      planned_start: opt(t.planned_start),
      actual_start: opt(t.actual_start),
      planned_end: opt(t.planned_end),
      actual_end: opt(t.actual_end),
      planned_duration_ms: t.planned_duration_ms,
      actual_duration_ms: t.actual_duration_ms,
      paused_ms: t.paused_ms,
      over_under_ms: opt(t.over_under_ms),
      plays: t.plays,
    },
  };
}

function actMessage(r: ActResult) {
  return { status: statusMessage(r.status), side_effects: r.side_effects.map(sideEffectMessage) };
}

function action(req: ActRequest): Action {
  const a = req.action;
  switch (a?.$case) {
    case 'start':
    case 'pause':
    case 'next':
    case 'previous':
    case 'end':
      return { kind: a.$case };
    case 'jump':
      return { kind: 'jump', cue_id: a.value.cue_id };
    case 'adjust_duration':
      return { kind: 'adjust', delta_ms: a.value.delta_ms };
    default:
      throw new AppError('bad_request', { detail: 'No action given.' });
  }
}

/** gRPC ↔ domain mapping for the runner; no rules live here. The gateway calls it for API tokens. */
export function runnerHandlers(runner: RunnerService<unknown>): ServiceBinding {
  return bindService(
    RunnerServiceService,
    {
      act: async (req, ctx) => actMessage(await runner.act(ctx, req.rundown_id, action(req), req.request_key)),
      getStatus: async (req, ctx) => statusMessage(await runner.status(ctx, req.rundown_id)),
      getTiming: async (req, ctx) => timingMessage(await runner.timing(ctx, req.rundown_id)),
      getReport: async (req, ctx) => reportMessage(await runner.report(ctx, req.rundown_id, req.report_id || undefined)),
      listReports: async (req, ctx) => ({
        reports: (await runner.reports(ctx, req.rundown_id)).map((r) => ({
          id: r.id,
          archived_at: r.archived_at,
          actual_start: opt(r.actual_start),
          actual_end: opt(r.actual_end),
          over_under_ms: opt(r.over_under_ms),
          plays: r.plays,
        })),
      }),
    },
    { edge: 'all', services: { webhooks: ['getTiming'] } },
  );
}

/** The admin surface (own port, the gateway's admin listener only). */
export function runnerAdminHandlers(runner: RunnerService<unknown>): ServiceBinding {
  return bindAdminService(RunnerAdminServiceService, {
    reset: async (req) => actMessage(await runner.reset(req.rundown_id)),
  });
}
