import { newEvent, Outbox, type Db, type Event, type SqlStatement } from '@rundown/shared';
import { RunnerPhase, RunnerState, type RunnerStatus } from '@rundown/shared/proto/rundown/events/v1/events';
import type { Cue } from '@rundown/shared/proto/rundown/rundown/v1/cues';
import type { EventLog } from '../domain/runner.js';
import type { Status } from '../domain/show.js';

const phases = { 'pre-show': RunnerPhase.RUNNER_PHASE_PRE_SHOW, running: RunnerPhase.RUNNER_PHASE_RUNNING, ended: RunnerPhase.RUNNER_PHASE_ENDED } as const;

export function runnerStatusMessage(s: Status, records: ReadonlyMap<string, Cue>): RunnerStatus {
  const a = s.active_cue;
  return {
    server_time: s.server_time,
    state: !a ? RunnerState.RUNNER_STATE_STOPPED : a.paused_at !== null ? RunnerState.RUNNER_STATE_PAUSED : RunnerState.RUNNER_STATE_RUNNING,
    active_cue: a ? { ...a, paused_at: a.paused_at ?? undefined } : undefined,
    next_cue: s.next_cue ?? undefined,
    phase: phases[s.phase],
    revision: s.revision,
    active_cue_record: a ? records.get(a.id) : undefined,
    next_cue_record: s.next_cue ? records.get(s.next_cue.id) : undefined,
  };
}

const statusEvent = (status: Status, teamId: string, records: ReadonlyMap<string, Cue>): Event =>
  newEvent(status.rundown_id, teamId, { $case: 'status', value: runnerStatusMessage(status, records) }, new Date(status.server_time));

/** The runner's `status` domain events, through its transactional outbox (same transaction as the change). */
export class OutboxEventLog implements EventLog<Cue> {
  constructor(readonly outbox = new Outbox('runner', 'runner')) {}

  async status(tx: Db, status: Status, teamId: string, records: ReadonlyMap<string, Cue>): Promise<void> {
    await this.outbox.enqueue(tx, [statusEvent(status, teamId, records)]);
  }

  statusInsert(status: Status, teamId: string, records: ReadonlyMap<string, Cue>): (first: number, onlyIf?: string) => SqlStatement {
    const events = [statusEvent(status, teamId, records)];
    return (first, onlyIf) => this.outbox.insert(events, first, onlyIf);
  }
}
