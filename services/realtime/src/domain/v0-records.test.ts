import { describe, expect, it } from 'vitest';
import { Change, Kind, RunnerPhase, RunnerState, type Event, type RundownEvent, type RunnerStatus } from '@rundown/shared/proto/rundown/events/v1/events';
import { CueType, type Cue } from '@rundown/shared/proto/rundown/rundown/v1/cues';
import { newEvent, type EventPayload } from '@rundown/shared/core';
import { applyEvent, PRE_SHOW_TIMESNAP, timesnapOf, V0_KINDS, v0Cue, type V0View } from './v0-records.js';

const cue = (id: string, extra: Partial<Cue> = {}): Cue => ({
  id,
  type: CueType.CUE_TYPE_CUE,
  title: id.toUpperCase(),
  subtitle: '',
  duration_ms: 10_000,
  prevent_edits: false,
  skip: false,
  skipped_by: 0,
  auto_advance: false,
  scheduled: false,
  created_at: new Date('2026-01-01T00:00:00.000Z'),
  updated_at: new Date('2026-01-01T00:00:00.000Z'),
  ...extra,
});

const view = (extra: Partial<V0View> = {}): V0View => ({
  teamId: 't',
  pos: '0-0',
  revision: 1,
  rundown: { id: 'r', name: 'R', startTime: null, endTime: null, status: 'draft', createdAt: 'x', updatedAt: 'x' },
  currentCue: null,
  nextCue: v0Cue(cue('a')),
  timesnap: { ...PRE_SHOW_TIMESNAP },
  ...extra,
});

const status = (s: Partial<RunnerStatus>): Event => ({
  event_id: 'evt',
  rundown_id: 'r',
  team_id: 't',
  kind: Kind.KIND_STATUS,
  source: 'runner',
  occurred_at: new Date(0),
  payload: { $case: 'status', value: { server_time: 0, state: RunnerState.RUNNER_STATE_RUNNING, phase: RunnerPhase.RUNNER_PHASE_RUNNING, revision: 2, ...s } as RunnerStatus },
});

describe('timesnapOf (docs/api-decisions.md#v0 and the countdown rules)', () => {
  it('pre-show is all null; ended carries ended: true', () => {
    expect(timesnapOf('pre-show', null)).toEqual({ running: false, cueId: null, kickoff: null, deadline: null, lastStop: null });
    expect(timesnapOf('ended', null)).toEqual({ running: false, cueId: null, kickoff: null, deadline: null, lastStop: null, ended: true });
  });

  it('running: deadline - kickoff is the live duration; paused: deadline - lastStop is what remains', () => {
    const running = timesnapOf('running', { id: 'a', started_at: 1_000, paused_at: null, duration_ms: 10_000 });
    expect(running).toEqual({ running: true, cueId: 'a', kickoff: 1_000, deadline: 11_000, lastStop: null });
    const paused = timesnapOf('running', { id: 'a', started_at: 1_000, paused_at: 4_000, duration_ms: 10_000 });
    expect(paused.deadline! - paused.lastStop!).toBe(7_000);
    expect(paused.running).toBe(false);
  });
});

describe('applyEvent', () => {
  it('a start: currentCue, nextCue, then timesnap; the same status again sends nothing', () => {
    const e = status({ active_cue: { id: 'a', title: 'A', started_at: 5, duration_ms: 10_000 }, next_cue: { id: 'b', title: 'B' }, active_cue_record: cue('a'), next_cue_record: cue('b') });
    const first = applyEvent(view(), '1-0', e);
    expect(first.emits.map((x) => x.event)).toEqual(['currentCue', 'nextCue', 'timesnap']);
    expect(first.view.pos).toBe('1-0');
    const again = applyEvent(first.view, '2-0', { ...e, payload: { $case: 'status', value: { ...(e.payload as { value: RunnerStatus }).value, revision: 3 } } });
    expect(again.emits).toEqual([]);
  });

  it('skips a status older than the view; keeps a fresher copy of the same cue', () => {
    const v = view({ revision: 5, currentCue: v0Cue(cue('a', { title: 'new', updated_at: new Date('2026-02-01T00:00:00.000Z') })) });
    expect(applyEvent(v, '1-0', status({ revision: 4 })).emits).toEqual([]);
    const stale = status({ revision: 6, active_cue: { id: 'a', title: 'A', started_at: 5, duration_ms: 1 }, active_cue_record: cue('a'), next_cue_record: cue('a') });
    const applied = applyEvent(v, '2-0', stale);
    expect(applied.view.currentCue?.title).toBe('new');
    expect(applied.emits.map((x) => x.event)).not.toContain('currentCue');
  });

  it('a cue edit re-sends the current or next cue only; a removal of the rundown says so', () => {
    const v = view({ currentCue: v0Cue(cue('a')), nextCue: v0Cue(cue('b')) });
    const edit = (c: Cue): Event => ({ ...status({}), kind: Kind.KIND_CUE, payload: { $case: 'cue', value: { change: Change.CHANGE_UPDATED, id: c.id, cue: c } } });
    expect(applyEvent(v, '1-0', edit(cue('b', { title: 'Bee' }))).emits).toEqual([{ event: 'nextCue', payload: v0Cue(cue('b', { title: 'Bee' })) }]);
    expect(applyEvent(v, '1-0', edit(cue('z', { title: 'Zed' }))).emits).toEqual([]);
    const removed: Event = { ...status({}), kind: Kind.KIND_RUNDOWN, payload: { $case: 'rundown', value: { change: Change.CHANGE_REMOVED, id: 'r' } as RundownEvent } };
    expect(applyEvent(v, '1-0', removed).removed).toBe(true);
  });

  it('an event of a kind outside V0_KINDS (which the event processor passes over undecoded) only moves the position', () => {
    const cell = { cue_id: 'a', column_id: 'c', content: 'x', content_html: '<p>x</p>', created_at: new Date(0), updated_at: new Date(0) };
    const others: EventPayload[] = [
      { $case: 'cell', value: { change: Change.CHANGE_UPDATED, cue_id: 'a', column_id: 'c', cell } },
      { $case: 'column', value: { change: Change.CHANGE_REMOVED, id: 'c', column: undefined } },
      { $case: 'mention', value: { change: Change.CHANGE_REMOVED, id: 'm', mention: undefined } },
      { $case: 'text_variable', value: { change: Change.CHANGE_REMOVED, key: 'v', text_variable: undefined } },
      { $case: 'output_message', value: { change: Change.CHANGE_UPDATED, output_message: undefined } },
    ];
    const covered = new Set([...V0_KINDS, ...others.map((payload) => newEvent('r', 't', payload).kind)]);
    expect(covered.size, 'every kind is either applied or passed over').toBe(Object.values(Kind).filter((k) => typeof k === 'number' && k >= 0).length);
    for (const payload of others) {
      const event = newEvent('r', 't', payload);
      expect(V0_KINDS.has(event.kind), payload.$case).toBe(false);
      const before = view({ currentCue: v0Cue(cue('a')) });
      expect(applyEvent(before, '5-0', event)).toEqual({ view: { ...before, pos: '5-0' }, emits: [] });
    }
  });
});
