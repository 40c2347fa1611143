import { z } from 'zod';
import { cueTimingStateNames, playEndNames, runnerPhaseNames } from '@rundown/shared/core';

/** Response shapes of timing against the plan (docs/api-decisions.md#timing); they document the routes in the OpenAPI document. */

const ms = z.number().int();
const at = ms.nullable();

const cueTiming = z.object({
  id: z.string(),
  title: z.string(),
  state: z.enum(cueTimingStateNames.names),
  planned_start: at,
  planned_duration_ms: ms,
  actual_start: at.describe('Start of the cue’s latest play (done and active cues)'),
  actual_duration_ms: at.describe('Time on air of that play, pauses excluded (done and active cues)'),
  projected_start: at.describe('The actual start for done and active cues; for upcoming ones, when they will start'),
  over_under_ms: at.describe('(actual or projected start) - planned start: > 0 late, < 0 early'),
});

export const timingRecord = z
  .object({
    server_time: ms,
    revision: ms,
    planned_start: at,
    actual_start: at,
    planned_end: at,
    projected_end: at,
    over_under_ms: at.describe('projected_end - planned_end: > 0 late, < 0 early'),
    cues: z.array(cueTiming),
  })
  .meta({
    examples: [
      {
        server_time: 1764003725000,
        revision: 4,
        planned_start: 1764003600000,
        actual_start: 1764003610000,
        planned_end: 1764003960000,
        projected_end: 1764003985000,
        over_under_ms: 25000,
        cues: [
          { id: 'cue_a', title: 'Opening', state: 'done', planned_start: 1764003600000, planned_duration_ms: 60000, actual_start: 1764003610000, actual_duration_ms: 75000, projected_start: 1764003610000, over_under_ms: 10000 },
          { id: 'cue_b', title: 'Interview', state: 'active', planned_start: 1764003660000, planned_duration_ms: 180000, actual_start: 1764003685000, actual_duration_ms: 40000, projected_start: 1764003685000, over_under_ms: 25000 },
          { id: 'cue_c', title: 'Close', state: 'upcoming', planned_start: 1764003840000, planned_duration_ms: 120000, actual_start: null, actual_duration_ms: null, projected_start: 1764003865000, over_under_ms: 25000 },
        ],
      },
    ],
  });

const reportRow = z.object({
  cue_id: z.string(),
  title: z.string(),
  play: ms.describe('1 for the cue’s first play in the show, 2 for its second…; 0: it never played'),
  planned_start: at,
  actual_start: at,
  actual_end: at,
  planned_duration_ms: ms,
  actual_duration_ms: at.describe('Time on air, pauses excluded'),
  over_under_ms: at.describe('actual_start - planned_start'),
  ended_by: z.enum(playEndNames.names).nullable().describe('How the play ended; null while it plays or when it never played'),
});

const reportTotals = z.object({
  planned_start: at,
  actual_start: at,
  planned_end: at,
  actual_end: at.describe('When the show ended; null while it runs'),
  planned_duration_ms: ms,
  actual_duration_ms: ms.describe('Time on air over every play, pauses excluded'),
  paused_ms: ms,
  over_under_ms: at.describe('(actual end, or the projected end while the show runs) - planned end'),
  plays: ms,
});

export const reportRecord = z
  .object({
    id: z.string().nullable().describe('The archived report’s id; null for the current show'),
    rundown_id: z.string(),
    phase: z.enum(runnerPhaseNames.names),
    timezone: z.string().nullable().describe('The rundown’s timezone: the CSV prints times in it'),
    server_time: ms,
    archived_at: at,
    rows: z.array(reportRow),
    totals: reportTotals,
  })
  .meta({
    examples: [
      {
        id: null,
        rundown_id: 'rd_x',
        phase: 'ended',
        timezone: 'Europe/Berlin',
        server_time: 1764004000000,
        archived_at: null,
        rows: [
          { cue_id: 'cue_a', title: 'Opening', play: 1, planned_start: 1764003600000, actual_start: 1764003610000, actual_end: 1764003685000, planned_duration_ms: 60000, actual_duration_ms: 75000, over_under_ms: 10000, ended_by: 'next' },
          { cue_id: 'cue_b', title: 'Interview', play: 1, planned_start: 1764003660000, actual_start: 1764003685000, actual_end: 1764003865000, planned_duration_ms: 180000, actual_duration_ms: 180000, over_under_ms: 25000, ended_by: 'auto_advance' },
          { cue_id: 'cue_c', title: 'Close', play: 1, planned_start: 1764003840000, actual_start: 1764003865000, actual_end: 1764003985000, planned_duration_ms: 120000, actual_duration_ms: 120000, over_under_ms: 25000, ended_by: 'end' },
        ],
        totals: { planned_start: 1764003600000, actual_start: 1764003610000, planned_end: 1764003960000, actual_end: 1764003985000, planned_duration_ms: 360000, actual_duration_ms: 375000, paused_ms: 0, over_under_ms: 25000, plays: 3 },
      },
    ],
  });

export const reportSummaryRecord = z.object({
  id: z.string(),
  archived_at: ms,
  actual_start: at,
  actual_end: at,
  over_under_ms: at,
  plays: ms,
});

export const reportListRecord = z.object({ items: z.array(reportSummaryRecord), next_cursor: z.null() });

export type TimingJson = z.output<typeof timingRecord>;
export type ReportJson = z.output<typeof reportRecord>;
