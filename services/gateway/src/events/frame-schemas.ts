import { z } from 'zod';
import { cellRecord } from '../wire/schemas/cells.js';
import { columnRecord } from '../wire/schemas/columns.js';
import { cueRecord } from '../wire/schemas/cues.js';
import { mentionRecord } from '../wire/schemas/mentions.js';
import { outputMessageRecord } from '../wire/schemas/output-message.js';
import { rundownRecord } from '../wire/schemas/rundowns.js';
import { statusRecord } from '../wire/schemas/runner.js';
import { textVariableRecord } from '../wire/schemas/text-variables.js';

/**
 * The frames of the v1 live events stream (docs/api-decisions.md#events) as schemas: the AsyncAPI document and the
 * events page are generated from them, and a unit test holds what `frames.ts` builds to them. The
 * records are the v1 API's own response schemas.
 */
const change = z.enum(['created', 'updated', 'removed', 'reordered']).describe('What happened to the resource');

export const disconnectReasons = ['lifetime', 'token_revoked', 'token_expired', 'rundown_removed'] as const;

interface FrameDef {
  summary: string;
  payload: z.ZodType;
  /** Whether the frame carries an `id:` (a stream position to resume after with `Last-Event-ID`). */
  hasId: boolean;
}

export const sseFrames = {
  ready: {
    summary: 'First frame of every stream: what it carries; `resync: true` when the asked-for `Last-Event-ID` was too old to replay',
    hasId: true,
    payload: z.object({
      rundown_id: z.string(),
      events: z.array(z.string()).describe('The subscription, `:fat` where fat, then `status`'),
      server_time: z.number().int().describe('ms since the UNIX epoch'),
      resync: z.literal(true).optional(),
    }),
  },
  status: { summary: 'The status object: a snapshot after `ready`, then on every runner change and deadline', hasId: true, payload: statusRecord },
  rundown: {
    summary: 'The rundown changed; `rundown:fat` adds the record. A `removed` ends the stream (`disconnect` `rundown_removed`)',
    hasId: true,
    payload: z.object({ change, id: z.string(), rundown: rundownRecord.optional().describe('With `rundown:fat`') }),
  },
  cue: { summary: 'A cue changed; `cue:fat` adds the record', hasId: true, payload: z.object({ change, id: z.string(), cue: cueRecord.optional().describe('With `cue:fat`') }) },
  column: {
    summary: 'A column changed; `column:fat` adds the record',
    hasId: true,
    payload: z.object({ change, id: z.string(), column: columnRecord.optional().describe('With `column:fat`') }),
  },
  cell: { summary: 'A cell was written', hasId: true, payload: z.object({ change, cue_id: z.string(), column_id: z.string(), cell: cellRecord }) },
  mention: { summary: 'A mention changed', hasId: true, payload: z.object({ change, id: z.string(), mention: mentionRecord.optional() }) },
  text_variable: {
    summary: 'A text variable changed (`id` is its key)',
    hasId: true,
    payload: z.object({ change, id: z.string(), text_variable: textVariableRecord.optional() }),
  },
  output_message: { summary: 'The output message changed', hasId: true, payload: z.object({ change, output_message: outputMessageRecord.optional() }) },
  heartbeat: { summary: 'Keeps idle connections open (every `SSE_HEARTBEAT_MS`, 15 s by default)', hasId: false, payload: z.object({ at: z.number().int().describe('ms since the UNIX epoch') }) },
  disconnect: {
    summary: 'Last frame before the server closes the stream',
    hasId: true,
    payload: z.object({ reason: z.enum(disconnectReasons) }),
  },
} as const satisfies Record<string, FrameDef>;

export type SseFrameName = keyof typeof sseFrames;
