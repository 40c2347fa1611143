import { describe, expect, it } from 'vitest';
import { Change, RunnerPhase, RunnerState } from '../generated/rundown/events/v1/events.js';
import { encodedEventKind, encodeEvent, Kind, newEvent, type EventPayload } from './codec.js';

const at = new Date('2026-01-02T03:04:05.678Z');

/** One payload of every case, with the fields a real event has (records, timestamps, nested messages). */
const payloads: EventPayload[] = [
  { $case: 'rundown', value: { change: Change.CHANGE_REMOVED, id: 'rd_1', rundown: undefined } },
  { $case: 'cue', value: { change: Change.CHANGE_REORDERED, id: 'cue_1', cue: undefined } },
  { $case: 'column', value: { change: Change.CHANGE_REMOVED, id: 'col_1', column: undefined } },
  {
    $case: 'cell',
    value: {
      change: Change.CHANGE_UPDATED,
      cue_id: 'cue_1',
      column_id: 'col_1',
      cell: { cue_id: 'cue_1', column_id: 'col_1', content: 'Stand by\nCamera 1', content_html: '<p>Stand by</p><p><b>Camera 1</b></p>', created_at: at, updated_at: at },
    },
  },
  { $case: 'mention', value: { change: Change.CHANGE_REMOVED, id: 'men_1', mention: undefined } },
  { $case: 'text_variable', value: { change: Change.CHANGE_UPDATED, key: 'show', text_variable: { key: 'show', value: 'Evening', created_at: at, updated_at: at } } },
  { $case: 'output_message', value: { change: Change.CHANGE_UPDATED, output_message: undefined } },
  {
    $case: 'status',
    value: {
      server_time: at.getTime(),
      state: RunnerState.RUNNER_STATE_RUNNING,
      active_cue: undefined,
      next_cue: undefined,
      phase: RunnerPhase.RUNNER_PHASE_UNSPECIFIED,
      revision: 42,
      active_cue_record: undefined,
      next_cue_record: undefined,
    },
  },
];

describe('encodedEventKind', () => {
  it.each(payloads.map((p) => [p.$case, p] as const))('reads the kind of an encoded %s event without decoding it', (_, payload) => {
    const event = newEvent('rd_1', 'team_1', payload, at);
    expect(encodedEventKind(encodeEvent({ ...event, source: 'cells' }))).toBe(event.kind);
  });

  it('answers KIND_UNSPECIFIED for an event that names no kind (proto3 leaves the zero out)', () => {
    const event = { ...newEvent('rd_1', 'team_1', payloads[0]!, at), kind: Kind.KIND_UNSPECIFIED, payload: undefined };
    expect(encodedEventKind(encodeEvent(event))).toBe(Kind.KIND_UNSPECIFIED);
  });
});
