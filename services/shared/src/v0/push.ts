import { z } from 'zod';
import { cueTypeNames, rundownStatusNames } from '../proto-enums.js';

/**
 * The v0 push channel's records and events (docs/api-decisions.md#v0, the specification's Events table), as
 * schemas: the realtime service's types are inferred from them and the gateway's AsyncAPI document
 * describes the channel from them, so the two cannot drift apart.
 */
const isoOrEmpty = z.string().describe('ISO 8601 instant (empty when unknown)');

export const v0RundownRecord = z
  .object({
    id: z.string(),
    name: z.string().describe('The rundown’s title'),
    startTime: z.iso.datetime().nullable(),
    endTime: z.iso.datetime().nullable(),
    status: z.union([z.enum(rundownStatusNames.names), z.literal('')]),
    createdAt: isoOrEmpty,
    updatedAt: isoOrEmpty,
  })
  .meta({
    examples: [
      { id: 'rd_01HZX3J8Q7', name: 'Evening News', startTime: '2026-11-22T18:00:00.000Z', endTime: null, status: 'draft', createdAt: '2026-11-20T09:12:00.000Z', updatedAt: '2026-11-22T17:40:05.000Z' },
    ],
  });

export const v0CueRecord = z
  .object({
    id: z.string(),
    type: z.enum(cueTypeNames.names),
    title: z.string(),
    subtitle: z.string(),
    duration: z.number().int().describe('Planned duration in ms'),
    backgroundColor: z.string().describe('#rgb or #rrggbb, or empty'),
    locked: z.boolean(),
    createdAt: isoOrEmpty,
    updatedAt: isoOrEmpty,
  })
  .meta({
    examples: [
      { id: 'cue_01HZX3K2', type: 'cue', title: 'Opening', subtitle: 'Anchor on cam 1', duration: 60000, backgroundColor: '#1f6feb', locked: false, createdAt: '2026-11-20T09:13:00.000Z', updatedAt: '2026-11-22T17:41:00.000Z' },
    ],
  });

export const v0TimesnapRecord = z
  .object({
    lastStop: z.number().int().nullable().describe('When the active cue was paused (ms since the epoch), null while running'),
    kickoff: z.number().int().nullable().describe('When the active cue started, moved forward by each pause (ms since the epoch)'),
    running: z.boolean(),
    cueId: z.string().nullable(),
    deadline: z.number().int().nullable().describe('kickoff + the cue’s live duration (ms since the epoch)'),
    ended: z.literal(true).optional().describe('Only after the show ended'),
  })
  .meta({ examples: [{ lastStop: null, kickoff: 1795370400000, running: true, cueId: 'cue_01HZX3K2', deadline: 1795370460000 }] });

/** Every event a v0 client receives, in the order a connection first receives them. */
export const v0PushEvents = {
  serverTime: {
    summary: 'The server’s clock, at connect and periodically after',
    payload: z.iso.datetime().meta({ examples: ['2026-11-22T18:00:00.000Z'] }),
  },
  rundown: { summary: 'The rundown, at connect and whenever it changes', payload: v0RundownRecord },
  currentCue: { summary: 'The active cue (null before the show and after it), at connect and whenever it changes', payload: v0CueRecord.nullable() },
  nextCue: { summary: 'The cue that `next` would start (null at the end), at connect and whenever it changes', payload: v0CueRecord.nullable() },
  timesnap: { summary: 'The show’s timing state, at connect and on every runner change', payload: v0TimesnapRecord },
} as const satisfies Record<string, { summary: string; payload: z.ZodType }>;

/** What a v0 client presents as Socket.IO `auth` when it connects. */
export const v0PushAuth = z.object({
  rundownId: z.string().min(1),
  apiToken: z.string().min(1).describe('The team’s v0 token'),
});

/** The messages of a refused connection's `connect_error` (`data.code` carries the v1 code). */
export const v0PushRefusals = ['Invalid API token', "Rundown doesn't exist", 'Too many requests; retry in <n> s', 'Service unavailable; retry'] as const;

export type V0Rundown = z.infer<typeof v0RundownRecord>;
export type V0Cue = z.infer<typeof v0CueRecord>;
export type V0Timesnap = z.infer<typeof v0TimesnapRecord>;
export type V0PushEventName = keyof typeof v0PushEvents;
