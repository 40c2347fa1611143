import { z } from 'zod';
import { idRef } from './common.js';

/** Bodies of the show-control actions (docs/api-decisions.md#runner); the bodyless ones take nothing (or `{}`). */
export const noActionBody = z.strictObject({});

export const jumpBody = z.strictObject({ cue_id: idRef }).meta({ examples: [{ cue_id: 'cue_01HZX3P4' }] });

/**
 * Any non-zero whole number of ms (a safe integer): a negative one larger than the live duration
 * leaves 0 (docs/api-decisions.md#runner); how far the live duration may grow is the runner's to say (`bad_request`
 * naming `limits.durationMsMax`), as only it knows the duration.
 */
export const adjustDurationBody = z.strictObject({
  delta_ms: z
    .number()
    .int()
    .refine((v) => v !== 0, 'must be a non-zero integer (ms)')
    .meta({ not: { const: 0 } }),
}).meta({ examples: [{ delta_ms: 30000 }, { delta_ms: -15000 }] });

const activeCue = z.object({
  id: z.string(),
  title: z.string(),
  started_at: z.number().int(),
  paused_at: z.number().int().nullable(),
  duration_ms: z.number().int(),
});

export const statusRecord = z.object({
  server_time: z.number().int(),
  state: z.enum(['running', 'paused', 'stopped']),
  active_cue: activeCue.nullable(),
  next_cue: z.object({ id: z.string(), title: z.string() }).nullable(),
  phase: z.enum(['pre-show', 'running', 'ended']),
  revision: z.number().int(),
}).meta({
  examples: [
    {
      server_time: 1795370430000, state: 'running', phase: 'running', revision: 12,
      active_cue: { id: 'cue_01HZX3K2', title: 'Opening', started_at: 1795370400000, paused_at: null, duration_ms: 60000 },
      next_cue: { id: 'cue_01HZX3M9', title: 'Headlines' },
    },
  ],
});

export const countdownRecord = z.object({
  state: z.enum(['running', 'paused', 'stopped']),
  server_time: z.number().int(),
  active_cue: z
    .object({
      cue_id: z.string(),
      title: z.string(),
      duration_ms: z.number().int(),
      remaining_ms: z.number().int(),
      remaining: z.object({
        is_overtime: z.boolean(),
        prefix: z.enum(['', '+']),
        days: z.number().int(),
        hours: z.number().int(),
        minutes: z.number().int(),
        seconds: z.number().int(),
        formatted: z.string(),
      }),
    })
    .nullable(),
});
