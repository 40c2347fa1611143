import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isAppError } from '@rundown/shared';
import { deadlineOf, PlayableOrder, preShow, transition, type Action, type OrderedCue, type ShowState } from './show.js';
import { applyPlayChange, playChange, report, timing, type Play } from './timing.js';

// Invariants of timing (docs/api-decisions.md#timing) over random shows driven through the runner's own rules.
const T = 1_764_000_000_000;

const cueArb = fc.record({
  type: fc.constantFrom('cue', 'cue', 'cue', 'heading'),
  duration_ms: fc.integer({ min: 0, max: 60_000 }),
  auto_advance: fc.boolean(),
  scheduled: fc.boolean(),
  start_offset: fc.integer({ min: 0, max: 300_000 }),
});

type GenCue = { type: string; duration_ms: number; auto_advance: boolean; scheduled: boolean; start_offset: number };

const toOrder = (cues: GenCue[], withHardStarts: boolean): OrderedCue[] =>
  cues.map((c, i) => ({
    id: `c${i}`,
    type: c.type,
    title: `C${i}`,
    duration_ms: c.duration_ms,
    skipped: false,
    auto_advance: c.auto_advance,
    scheduled: withHardStarts && c.scheduled,
    start_time: withHardStarts && c.scheduled ? T + c.start_offset : null,
  }));

const actionArb: fc.Arbitrary<[Action['kind'], number, number]> = fc.tuple(
  fc.constantFrom<Action['kind']>('start', 'pause', 'next', 'previous', 'jump', 'adjust', 'end', 'deadline'),
  fc.integer({ min: 0, max: 30_000 }), // time until the action
  fc.integer({ min: -20_000, max: 20_000 }), // a delta, or which cue to jump to
);

/** Runs actions through the pure rules, keeping the plays as the service stores them and the time paused as a clock would. */
class Simulation {
  state: ShowState = preShow();
  plays: Play[] = [];
  now = T;
  paused = 0;

  constructor(readonly order: PlayableOrder) {}

  act(action: Action): void {
    let outcome;
    try {
      outcome = transition('rd', this.state, action, this.order, this.now);
    } catch (error) {
      if (isAppError(error)) return; // refused by the rules: nothing changes
      throw error;
    }
    if (!outcome.changed) return;
    const was = this.state.phase === 'running' ? this.state.active : null;
    const is = outcome.state.phase === 'running' ? outcome.state.active : null;
    // A pause ends when the show runs again (resume, or any new play) or stops.
    if (was?.paused_at != null && (is === null || is.paused_at === null)) this.paused += outcome.at - was.paused_at;
    this.plays = applyPlayChange(this.plays, playChange(this.state, outcome));
    this.state = outcome.state;
  }

  timing(startTime: number | null = T) {
    return timing({ rundownId: 'rd', startTime, order: this.order, state: this.state, plays: this.plays, now: this.now });
  }

  pausedUntilNow(): number {
    const a = this.state.phase === 'running' ? this.state.active : null;
    return this.paused + (a?.paused_at != null ? this.now - a.paused_at : 0);
  }
}

function toAction(kind: Action['kind'], n: number, order: PlayableOrder): Action {
  switch (kind) {
    case 'jump':
      return { kind, cue_id: order.ids.length ? order.ids[Math.abs(n) % order.ids.length]! : 'none' };
    case 'adjust':
      return { kind, delta_ms: n === 0 ? 1 : n };
    default:
      return { kind } as Action;
  }
}

describe('timing invariants (property-based)', () => {
  it('the projection of a running show never ends before server_time', () => {
    fc.assert(
      fc.property(fc.array(cueArb, { minLength: 1, maxLength: 12 }), fc.array(actionArb, { maxLength: 40 }), fc.integer({ min: 0, max: 120_000 }), (cues, actions, startOffset) => {
        const sim = new Simulation(new PlayableOrder(toOrder(cues, true)));
        for (const [kind, wait, n] of actions) {
          sim.now += wait;
          sim.act(toAction(kind, n, sim.order));
          if (sim.state.phase !== 'running') continue;
          const t = sim.timing(T + startOffset);
          expect(t.projected_end).not.toBeNull();
          expect(t.projected_end!).toBeGreaterThanOrEqual(sim.now);
          // Every projected start of a cue still to come is no earlier than now.
          for (const c of t.cues) if (c.state === 'upcoming' && c.projected_start !== null) expect(c.projected_start).toBeGreaterThanOrEqual(sim.now);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('without pauses, adjustments or hard starts, the projected end moves only when the active cue runs over', () => {
    fc.assert(
      fc.property(
        fc.array(cueArb, { minLength: 1, maxLength: 10 }),
        // per cue: how long past its deadline the caller presses next (0: on the dot), and where to sample
        fc.array(fc.tuple(fc.integer({ min: 0, max: 5_000 }), fc.double({ min: 0, max: 1, noNaN: true })), { minLength: 10, maxLength: 10 }),
        (cues, overruns) => {
          const order = new PlayableOrder(toOrder(cues, false));
          if (!order.ids.length) return;
          const sim = new Simulation(order);
          sim.act({ kind: 'start' });
          const plannedEnd = T + order.cues.reduce((sum, c) => sum + c.duration_ms, 0);
          let overrun = 0;
          expect(sim.timing().projected_end).toBe(plannedEnd);
          for (let i = 0; sim.state.phase === 'running'; i++) {
            const deadline = deadlineOf(sim.state)!;
            const [over, sample] = overruns[i % overruns.length]!;
            // Before the deadline: the end stays where it was.
            const before = sim.now + Math.floor((deadline - sim.now) * sample);
            sim.now = before;
            expect(sim.timing().projected_end).toBe(plannedEnd + overrun);
            // Past it: the end moves by exactly how far the active cue ran over.
            sim.now = deadline + over;
            expect(sim.timing().projected_end).toBe(plannedEnd + overrun + over);
            overrun += over;
            const cue = order.playable(sim.state.active!.cue_id)!;
            if (cue.auto_advance) {
              sim.now = deadline;
              overrun -= over; // auto_advance moves on at the deadline instant: nothing ran over
              sim.act({ kind: 'deadline' });
            } else if (order.neighbour(cue.id, 1, []) === undefined) {
              sim.act({ kind: 'end' });
            } else {
              sim.act({ kind: 'next' });
            }
            if (sim.state.phase === 'running') expect(sim.timing().projected_end).toBe(plannedEnd + overrun);
          }
          expect(sim.timing().projected_end).toBe(plannedEnd + overrun);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('the actual durations of the plays add up to the time since the actual start minus the time paused', () => {
    fc.assert(
      fc.property(fc.array(cueArb, { minLength: 1, maxLength: 8 }), fc.array(actionArb, { minLength: 1, maxLength: 60 }), (cues, actions) => {
        const sim = new Simulation(new PlayableOrder(toOrder(cues, false)));
        for (const [kind, wait, n] of actions) {
          sim.now += wait;
          // A deadline acts (as of its due instant) only once it is due; before, it is stale.
          sim.act(toAction(kind, n, sim.order));
          if (sim.state.phase === 'pre-show') continue;
          const r = report({ rundownId: 'rd', startTime: T, timezone: null, order: sim.order, state: sim.state, plays: sim.plays, now: sim.now });
          const end = sim.state.phase === 'ended' ? sim.plays.at(-1)!.ended_at! : sim.now;
          const paused = sim.pausedUntilNow();
          expect(r.totals.actual_duration_ms).toBe(end - r.totals.actual_start! - paused);
          expect(r.totals.paused_ms).toBe(paused);
          // The done cues of the timing are plays of the report.
          const t = sim.timing();
          const byStart = new Map(r.rows.filter((x) => x.actual_start !== null).map((x) => [`${x.cue_id}@${x.actual_start}`, x.actual_duration_ms]));
          for (const c of t.cues) if (c.state === 'done' && c.actual_start !== null) expect(c.actual_duration_ms).toBe(byStart.get(`${c.id}@${c.actual_start}`));
          if (sim.state.phase === 'ended') break;
        }
      }),
      { numRuns: 300 },
    );
  });
});
