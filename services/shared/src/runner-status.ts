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
