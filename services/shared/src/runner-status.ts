import { RunnerPhase, RunnerState, type RunnerStatus } from './generated/rundown/events/v1/events.js';

/**
 * The runner's status read model in Redis (written by the runner after each commit, read by every
 * gateway): one definition of its key, channel and shape.
 */
export const runnerStatusKey = (rundownId: string): string => `runner:status:{${rundownId}}`;
export const RUNNER_STATUS_CHANNEL = 'runner:status';

/** The docs/api-decisions.md#runner status without its clock (`server_time` is the reader's), and whose rundown it is. */
export interface StoredRunnerStatus {
  rundown_id: string;
  team_id: string;
  phase: 'pre-show' | 'running' | 'ended';
  active_cue: { id: string; title: string; started_at: number; paused_at: number | null; duration_ms: number } | null;
  next_cue: { id: string; title: string } | null;
  revision: number;
  /** When the runner committed it (ms). */
  at: number;
}

const states = {
  [RunnerState.RUNNER_STATE_RUNNING]: 'running',
  [RunnerState.RUNNER_STATE_PAUSED]: 'paused',
  [RunnerState.RUNNER_STATE_STOPPED]: 'stopped',
} as const satisfies Partial<Record<RunnerState, string>>;
const phases = {
  [RunnerPhase.RUNNER_PHASE_PRE_SHOW]: 'pre-show',
  [RunnerPhase.RUNNER_PHASE_RUNNING]: 'running',
  [RunnerPhase.RUNNER_PHASE_ENDED]: 'ended',
} as const satisfies Partial<Record<RunnerPhase, string>>;

/**
 * The status object of docs/api-decisions.md#runner from the runner's `status` event: the SSE `status`
 * frame's data and the `status.changed` webhook's.
 */
export function statusEventJson(s: RunnerStatus) {
  const a = s.active_cue;
  const state: (typeof states)[keyof typeof states] = states[s.state as keyof typeof states] ?? 'stopped';
  return {
    server_time: s.server_time,
    state,
    active_cue: a && state !== 'stopped' ? { id: a.id, title: a.title, started_at: a.started_at, paused_at: a.paused_at ?? null, duration_ms: a.duration_ms } : null,
    next_cue: s.next_cue ? { id: s.next_cue.id, title: s.next_cue.title } : null,
    phase: (phases[s.phase as keyof typeof phases] ?? 'pre-show') as (typeof phases)[keyof typeof phases],
    revision: s.revision,
  };
}
