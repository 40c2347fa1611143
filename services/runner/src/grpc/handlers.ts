import { AppError, bindAdminService, bindService, type ServiceBinding } from '@rundown/shared';
import {
  Phase,
  RunnerAdminServiceService,
  RunnerServiceService,
  type ActRequest,
  type SideEffect as SideEffectMessage,
  type Status as StatusMessage,
} from '@rundown/shared/proto/rundown/runner/v1/runner';
import type { ActResult, RunnerService } from '../domain/runner.js';
import type { Action, SideEffect, Status } from '../domain/show.js';

const phases = { 'pre-show': Phase.PHASE_PRE_SHOW, running: Phase.PHASE_RUNNING, ended: Phase.PHASE_ENDED } as const;

export function statusMessage(s: Status): StatusMessage {
  return {
    rundown_id: s.rundown_id,
    server_time: s.server_time,
    phase: phases[s.phase],
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
      act: async (req, ctx) => actMessage(await runner.act(ctx, req.rundown_id, action(req))),
      getStatus: async (req, ctx) => statusMessage(await runner.status(ctx, req.rundown_id)),
    },
    { edge: 'all' },
  );
}

/** The admin surface (own port, the gateway's admin listener only). */
export function runnerAdminHandlers(runner: RunnerService<unknown>): ServiceBinding {
  return bindAdminService(RunnerAdminServiceService, {
    reset: async (req) => actMessage(await runner.reset(req.rundown_id)),
  });
}
