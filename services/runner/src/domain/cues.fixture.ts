import type { OrderedCue } from './show.js';

/** A playable cue of 1 s with every flag off, for the domain's tests; `fields` overrides. */
export const cue = (id: string, fields: Partial<OrderedCue> = {}): OrderedCue => ({
  id,
  type: 'cue',
  title: id.toUpperCase(),
  duration_ms: 1_000,
  skipped: false,
  auto_advance: false,
  scheduled: false,
  start_time: null,
  ...fields,
});
