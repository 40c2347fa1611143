import { describe, expect, it } from 'vitest';
import { eventsQuery, subscriptionList } from './subscription.js';

const parse = (events?: string) => eventsQuery.safeParse(events === undefined ? {} : { events });

describe('the events= subscription', () => {
  it('absent: every name, thin; empty: status only', () => {
    expect(subscriptionList(parse().data!)).toEqual(['rundown', 'cue', 'column', 'cell', 'mention', 'text_variable', 'output_message', 'status']);
    expect(subscriptionList(parse('').data!)).toEqual(['status']);
  });

  it('names with :fat where the record can ride along, canonical order, a repeat keeps the fattest', () => {
    const sub = parse(' mention,cue:fat, rundown ,cue,status,column:fat').data!;
    expect(subscriptionList(sub)).toEqual(['rundown', 'cue:fat', 'column:fat', 'mention', 'status']);
    expect(sub.names.get('cue')).toBe(true);
    expect(sub.names.get('mention')).toBe(false);
    expect(sub.names.has('cell')).toBe(false);
  });

  it('timing only when named (a computed frame, docs/api-decisions.md#timing), never with a suffix', () => {
    expect(parse().data!.timing).toBe(false);
    const sub = parse('timing,cue').data!;
    expect(sub.timing).toBe(true);
    expect(subscriptionList(sub)).toEqual(['cue', 'timing', 'status']);
    expect(subscriptionList(parse('timing').data!)).toEqual(['timing', 'status']);
    for (const bad of ['timing:fat', 'timings']) expect(parse(bad).success, bad).toBe(false);
  });

  it('unknown names, suffixes and :fat where none exists are issues at events', () => {
    for (const bad of ['cues', 'cue:thin', 'cue:fat:fat', 'mention:fat', 'cell:fat', 'output_message:fat', 'status:fat']) {
      const result = parse(bad);
      expect(result.success, bad).toBe(false);
      expect(result.error!.issues[0]!.path).toEqual(['events']);
    }
    expect(eventsQuery.safeParse({ events: ['cue', 'mention'] }).success).toBe(false);
  });
});
