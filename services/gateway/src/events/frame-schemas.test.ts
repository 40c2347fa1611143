import { describe, expect, it } from 'vitest';
import { newEvent, type Event } from '@rundown/shared/core';
import { Change, RunnerPhase, RunnerState } from '@rundown/shared/proto/rundown/events/v1/events';
import { CueType, SkippedBy } from '@rundown/shared/proto/rundown/rundown/v1/cues';
import { sseFrames, type SseFrameName } from './frame-schemas.js';
import { disconnectFrame, heartbeatFrame, LiveEvent } from './frames.js';

const at = new Date('2026-01-02T03:04:05.000Z');
const data = (frame: Buffer) => JSON.parse(frame.toString().split('\ndata:')[1]!) as unknown;
const nameOf = (frame: Buffer) => /^event:(\w+)/.exec(frame.toString())![1] as SseFrameName;

/** One event of each payload the frames know, with the record attached where one can ride along. */
const events: NonNullable<Event['payload']>[] = [
  { $case: 'cue', value: { change: Change.CHANGE_CREATED, id: 'cue_1', cue: { id: 'cue_1', type: CueType.CUE_TYPE_CUE, title: 'A', subtitle: '', duration_ms: 1, prevent_edits: false, skip: false, skipped_by: SkippedBy.SKIPPED_BY_UNSPECIFIED, auto_advance: false, scheduled: false, created_at: at, updated_at: at } } },
  { $case: 'cell', value: { change: Change.CHANGE_UPDATED, cue_id: 'cue_1', column_id: 'col_1', cell: { cue_id: 'cue_1', column_id: 'col_1', content: 'x', content_html: '<p>x</p>', created_at: at, updated_at: at } } },
  { $case: 'cell', value: { change: Change.CHANGE_REMOVED, cue_id: 'cue_1', column_id: 'col_1', cell: undefined } },
  { $case: 'mention', value: { change: Change.CHANGE_REMOVED, id: 'men_1', mention: undefined } },
  { $case: 'rundown', value: { change: Change.CHANGE_REMOVED, id: 'rd_1', rundown: undefined } },
  {
    $case: 'status',
    value: {
      server_time: 7,
      state: RunnerState.RUNNER_STATE_RUNNING,
      phase: RunnerPhase.RUNNER_PHASE_RUNNING,
      active_cue: { id: 'cue_1', title: 'A', started_at: 1, paused_at: undefined, duration_ms: 9 },
      next_cue: { id: 'cue_2', title: 'B' },
      revision: 3,
      active_cue_record: undefined,
      next_cue_record: undefined,
    },
  },
];

describe('the SSE frame schemas (the AsyncAPI document’s source)', () => {
  it('describe what the frames really carry, thin and fat', () => {
    const frames = events.flatMap((payload) => {
      const event = LiveEvent.from('10-0', newEvent('rd_1', 'team_1', payload))!;
      return [event.frame(false), event.frame(true)];
    });
    frames.push(heartbeatFrame(5), disconnectFrame('token_revoked', '11-0'));
    for (const frame of frames) {
      const name = nameOf(frame);
      const parsed = sseFrames[name].payload.safeParse(data(frame));
      expect(parsed.success, `${frame.toString()} ${JSON.stringify(parsed.error?.issues)}`).toBe(true);
      expect(frame.toString().includes('\nid:'), name).toBe(sseFrames[name].hasId);
    }
  });

  it('refuse what a frame never carries', () => {
    expect(sseFrames.disconnect.payload.safeParse({ reason: 'bored' }).success).toBe(false);
    expect(sseFrames.cue.payload.safeParse({ change: 'moved', id: 'cue_1' }).success).toBe(false);
  });
});
