import { describe, expect, it } from 'vitest';
import { Change, RunnerPhase, RunnerState, type Event } from './generated/rundown/events/v1/events.js';
import { eventData } from './event-data.js';
import { newEvent } from './outbox/index.js';

const at = new Date('2026-01-02T03:04:05.000Z');
const event = (payload: NonNullable<Event['payload']>) => newEvent('rd_1', 'team_1', payload);
/** The data as it is written (SSE `data:` line, webhook body): the bytes, key order included. */
const written = (e: Event) => {
  const made = eventData(e);
  return made && { name: made.name, change: made.change, json: JSON.stringify(made.data) };
};

describe('the §7 event data', () => {
  it('rundown, cue and column: the change and the id only (the record rides on the fat SSE form alone)', () => {
    expect(written(event({ $case: 'rundown', value: { change: Change.CHANGE_REMOVED, id: 'rd_1', rundown: undefined } }))).toEqual({
      name: 'rundown',
      change: 'removed',
      json: '{"change":"removed","id":"rd_1"}',
    });
    expect(written(event({ $case: 'cue', value: { change: Change.CHANGE_REORDERED, id: 'cue_1', cue: undefined } }))?.json).toBe('{"change":"reordered","id":"cue_1"}');
    expect(written(event({ $case: 'column', value: { change: Change.CHANGE_CREATED, id: 'col_1', column: undefined } }))?.json).toBe('{"change":"created","id":"col_1"}');
  });

  it('cell: the coordinate and the cell, an empty one of the coordinate when the event has none', () => {
    const cell = { cue_id: 'cue_1', column_id: 'col_1', content: 'a', content_html: '<p>a</p>', created_at: at, updated_at: at };
    expect(written(event({ $case: 'cell', value: { change: Change.CHANGE_UPDATED, cue_id: 'cue_1', column_id: 'col_1', cell } }))?.json).toBe(
      '{"change":"updated","cue_id":"cue_1","column_id":"col_1","cell":{"cue_id":"cue_1","column_id":"col_1","content":"a","content_html":"<p>a</p>","created_at":"2026-01-02T03:04:05.000Z","updated_at":"2026-01-02T03:04:05.000Z"}}',
    );
    expect(written(event({ $case: 'cell', value: { change: Change.CHANGE_REMOVED, cue_id: 'cue_1', column_id: 'col_1', cell: undefined } }))?.json).toBe(
      '{"change":"removed","cue_id":"cue_1","column_id":"col_1","cell":{"cue_id":"cue_1","column_id":"col_1","content":"","content_html":"","created_at":null,"updated_at":null}}',
    );
  });

  it('mention, text variable and output message carry their record when the event has it', () => {
    const mention = { id: 'men_1', name: 'Host', color: '#ff0000', description: '', created_at: at, updated_at: at };
    expect(written(event({ $case: 'mention', value: { change: Change.CHANGE_CREATED, id: 'men_1', mention } }))?.json).toBe(
      '{"change":"created","id":"men_1","mention":{"id":"men_1","name":"Host","color":"#ff0000","description":"","created_at":"2026-01-02T03:04:05.000Z","updated_at":"2026-01-02T03:04:05.000Z"}}',
    );
    expect(written(event({ $case: 'mention', value: { change: Change.CHANGE_REMOVED, id: 'men_1', mention: undefined } }))?.json).toBe('{"change":"removed","id":"men_1"}');
    const variable = { key: 'guest', value: 'Ada', created_at: at, updated_at: at };
    expect(written(event({ $case: 'text_variable', value: { change: Change.CHANGE_UPDATED, key: 'guest', text_variable: variable } }))?.json).toBe(
      '{"change":"updated","id":"guest","text_variable":{"key":"guest","value":"Ada","created_at":"2026-01-02T03:04:05.000Z","updated_at":"2026-01-02T03:04:05.000Z"}}',
    );
    const message = { text: 'Go', visible: true, color: '#fff', bold: false, underline: true, updated_at: undefined };
    expect(written(event({ $case: 'output_message', value: { change: Change.CHANGE_UPDATED, output_message: message } }))).toEqual({
      name: 'output_message',
      change: 'updated',
      json: '{"change":"updated","output_message":{"text":"Go","visible":true,"color":"#fff","bold":false,"underline":true,"updated_at":null}}',
    });
  });

  it('status: the status object, whose change is `changed`', () => {
    const status = event({
      $case: 'status',
      value: {
        server_time: 7,
        state: RunnerState.RUNNER_STATE_STOPPED,
        phase: RunnerPhase.RUNNER_PHASE_ENDED,
        active_cue: { id: 'cue_1', title: 'A', started_at: 1, paused_at: undefined, duration_ms: 9 },
        next_cue: undefined,
        revision: 3,
        active_cue_record: undefined,
        next_cue_record: undefined,
      },
    });
    expect(written(status)).toEqual({
      name: 'status',
      change: 'changed',
      json: '{"server_time":7,"state":"stopped","active_cue":null,"next_cue":null,"phase":"ended","revision":3}',
    });
  });

  it('a payload this build does not know makes no data', () => {
    expect(eventData({ ...event({ $case: 'cue', value: { change: Change.CHANGE_UPDATED, id: 'cue_1', cue: undefined } }), payload: undefined })).toBeUndefined();
  });
});
