import { describe, expect, it } from 'vitest';
import { newEvent } from '@rundown/shared/core';
import { Change, RunnerPhase, RunnerState } from '@rundown/shared/proto/rundown/events/v1/events';
import { CueType, SkippedBy, type Cue } from '@rundown/shared/proto/rundown/rundown/v1/cues';
import { afterPosition, frame, LiveEvent, parseStreamId } from './frames.js';

describe('SSE frames', () => {
  it('event, id and one JSON data line; no id on a heartbeat', () => {
    expect(frame('cue', { change: 'removed', id: 'cue_1' }, '1-2').toString()).toBe('event:cue\nid:1-2\ndata:{"change":"removed","id":"cue_1"}\n\n');
    expect(frame('heartbeat', { at: 5 }).toString()).toBe('event:heartbeat\ndata:{"at":5}\n\n');
    // A newline inside a value stays escaped inside the JSON: one data line.
    expect(frame('x', { text: 'a\nb' }, '1-0').toString().split('\n').filter((l) => l.startsWith('data:'))).toHaveLength(1);
  });

  it('thin and fat bodies, each built once', () => {
    const at = new Date('2026-01-02T03:04:05.000Z');
    const cue: Cue = {
      id: 'cue_1',
      type: CueType.CUE_TYPE_CUE,
      title: 'A',
      subtitle: '',
      duration_ms: 1,
      prevent_edits: false,
      skip: false,
      skipped_by: SkippedBy.SKIPPED_BY_UNSPECIFIED,
      auto_advance: false,
      scheduled: false,
      created_at: at,
      updated_at: at,
    };
    const event = LiveEvent.from('10-0', newEvent('rd_1', 'team_1', { $case: 'cue', value: { change: Change.CHANGE_UPDATED, id: 'cue_1', cue } }))!;
    expect(JSON.parse(event.frame(false).toString().split('data:')[1]!)).toEqual({ change: 'updated', id: 'cue_1' });
    expect(JSON.parse(event.frame(true).toString().split('data:')[1]!)).toMatchObject({ change: 'updated', id: 'cue_1', cue: { id: 'cue_1', type: 'cue', title: 'A', parent_id: null, created_at: at.toISOString() } });
    expect(event.frame(true)).toBe(event.frame(true));
  });

  it('status from the runner event; a rundown removal ends the streams', () => {
    const status = LiveEvent.from(
      '11-0',
      newEvent('rd_1', 'team_1', {
        $case: 'status',
        value: {
          server_time: 7,
          state: RunnerState.RUNNER_STATE_PAUSED,
          phase: RunnerPhase.RUNNER_PHASE_RUNNING,
          active_cue: { id: 'cue_1', title: 'A', started_at: 1, paused_at: 5, duration_ms: 9 },
          next_cue: undefined,
          revision: 3,
          active_cue_record: undefined,
          next_cue_record: undefined,
        },
      }),
    )!;
    expect(status.bodies).toMatchObject({
      name: 'status',
      revision: 3,
      thin: { server_time: 7, state: 'paused', phase: 'running', active_cue: { id: 'cue_1', paused_at: 5 }, next_cue: null, revision: 3 },
    });
    const removed = LiveEvent.from('12-0', newEvent('rd_1', 'team_1', { $case: 'rundown', value: { change: Change.CHANGE_REMOVED, id: 'rd_1', rundown: undefined } }))!;
    expect(removed.bodies).toMatchObject({ name: 'rundown', thin: { change: 'removed', id: 'rd_1' }, removesRundown: true });
  });

  it('stream ids compare as (ms, n)', () => {
    expect(parseStreamId('1795372242748-10')).toEqual([1795372242748, 10]);
    for (const bad of ['', '12', '1-2-3', 'a-1', '-1-0', '99999999999999999-0']) expect(parseStreamId(bad), bad).toBeUndefined();
    expect(afterPosition([2, 0], [1, 9])).toBe(true);
    expect(afterPosition([1, 10], [1, 9])).toBe(true);
    expect(afterPosition([1, 9], [1, 9])).toBe(false);
  });
});
