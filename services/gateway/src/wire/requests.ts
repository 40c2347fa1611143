import type { z } from 'zod';
import { cueTypeNames, deliveryStateNames, rundownStatusNames, todDisplayFormatNames } from '@rundown/shared/core';
import type { CellWrite } from '@rundown/shared/proto/rundown/cells/v1/cells';
import type { CreateCue, NewCue, PatchCue, Position } from '@rundown/shared/proto/rundown/rundown/v1/cues';
import type { MentionFields } from '@rundown/shared/proto/rundown/rundown/v1/mentions';
import { TodDisplayFormat, type CreateRundownRequest, type SettingsPatch, type UpdateRundownRequest } from '@rundown/shared/proto/rundown/rundown/v1/rundown';
import type { ActRequest } from '@rundown/shared/proto/rundown/runner/v1/runner';
import type { CellWriteBody } from './schemas/cells.js';
import type { BulkItemBody, CueBody, NewCueBody, PositionBody } from './schemas/cues.js';
import type { CreateRundownBody, patchRundownBody, SettingsPatchBody } from './schemas/rundowns.js';
import type { deliveriesQuery } from './schemas/webhooks.js';

/**
 * The gateway's request mappers, the counterpart of `records.ts`: parsed request bodies and queries
 * (the zod schemas of `schemas/`) → the proto messages the services take. JSON merge-patch nulls become
 * the proto's reset flags; absent fields stay absent. Nothing is decided here: every rule lives in the
 * service. Used by the v1 routes, imports (`transfer.ts`) and the admin listener.
 */

function positionMessage(p: PositionBody | undefined): Position | undefined {
  if (!p) return undefined;
  if ('before_cue_id' in p) return { target: { $case: 'before_cue_id', value: p.before_cue_id } };
  if ('after_cue_id' in p) return { target: { $case: 'after_cue_id', value: p.after_cue_id } };
  if ('start' in p) return { target: p.start === true ? { $case: 'start', value: true } : { $case: 'start_of_group', value: p.start } };
  return { target: p.end === true ? { $case: 'end', value: true } : { $case: 'end_of_group', value: p.end } };
}

/** The fields a create and a patch of a cue share. */
const commonCueFields = (b: CueBody) => ({
  type: b.type && cueTypeNames.toProto(b.type),
  title: b.title,
  subtitle: b.subtitle,
  duration_ms: b.duration_ms,
  skip: b.skip,
  auto_advance: b.auto_advance,
  scheduled: b.scheduled,
  position: positionMessage(b.position),
});

export function createCueMessage(b: CueBody): CreateCue {
  return { ...commonCueFields(b), background_color: b.background_color ?? undefined, start_time: b.start_time ?? undefined };
}

export function patchCueMessage(id: string, b: CueBody): PatchCue {
  return {
    id,
    ...commonCueFields(b),
    set_background_color: b.background_color !== undefined,
    background_color: b.background_color ?? undefined,
    set_start_time: b.start_time !== undefined,
    start_time: b.start_time ?? undefined,
  };
}

/** A cue of a rundown create body: cells keyed by column name; `children` on groups. */
export function newCueMessage(cue: NewCueBody): NewCue {
  const { cells = {}, children = [], ...fields } = cue;
  return {
    fields: createCueMessage(fields),
    cells: Object.entries(cells).map(([column_name, value]) => ({
      column_name,
      content: typeof value === 'string' ? { $case: 'text', value } : { $case: 'html', value: value.content_html },
    })),
    children: children.map(newCueMessage),
  };
}

/** A cue of `cues:bulk`; a create takes `newId`, when given (see `HandlerInput.keyedId`). */
export function bulkCueItemMessage({ id, ...fields }: BulkItemBody, newId: string | undefined) {
  return id === undefined
    ? { op: { $case: 'create' as const, value: { ...createCueMessage(fields), ...(newId ? { id: newId } : {}) } } }
    : { op: { $case: 'patch' as const, value: patchCueMessage(id, fields) } };
}

/** JSON merge patch (null resets) -> proto patch (reset flags). */
function settingsPatchMessage(p: SettingsPatchBody | undefined): SettingsPatch | undefined {
  if (p === undefined) return undefined;
  const n = p.cue_numbering;
  return {
    cue_numbering: n
      ? {
          start_from: n.start_from ?? undefined,
          reset_start_from: n.start_from === null,
          prefix: n.prefix ?? undefined,
          reset_prefix: n.prefix === null,
          padding: n.padding ?? undefined,
          reset_padding: n.padding === null,
        }
      : undefined,
    reset_cue_numbering: n === null,
    tod_display_format:
      p.tod_display_format === undefined
        ? undefined
        : p.tod_display_format === null
          ? TodDisplayFormat.TOD_DISPLAY_FORMAT_UNSPECIFIED
          : todDisplayFormatNames.toProto(p.tod_display_format),
  };
}

/**
 * A create body -> the create request (the one create path: POST /rundowns, and an import with
 * what it brings besides). `id`: the id derived from an Idempotency-Key, if any.
 */
export function createRundownMessage(body: CreateRundownBody, id: string | undefined, extras?: Pick<CreateRundownRequest, 'mentions' | 'text_variables' | 'output_message'>): CreateRundownRequest {
  return {
    title: body.title,
    timezone: body.timezone ?? undefined,
    start_time: body.start_time ?? undefined,
    status: body.status && rundownStatusNames.toProto(body.status),
    settings: settingsPatchMessage(body.settings),
    columns: body.columns ?? [],
    cues: (body.cues ?? []).map(newCueMessage),
    ...(id ? { id } : {}),
    mentions: extras?.mentions ?? [],
    text_variables: extras?.text_variables ?? [],
    output_message: extras?.output_message,
  };
}

/** A rundown PATCH (JSON merge patch) -> the update request: `null` resets, an absent field keeps. */
export function patchRundownMessage(rundownId: string, body: z.output<typeof patchRundownBody>): UpdateRundownRequest {
  return {
    rundown_id: rundownId,
    title: body.title,
    set_timezone: body.timezone !== undefined,
    timezone: body.timezone ?? undefined,
    set_start_time: body.start_time !== undefined,
    start_time: body.start_time ?? undefined,
    status: body.status && rundownStatusNames.toProto(body.status),
    settings_patch: settingsPatchMessage(body.settings),
  };
}

/** A cell write of PATCH cells or `cells:bulk`. */
export function cellWriteMessage(b: CellWriteBody): CellWrite {
  return {
    cue_id: b.cue_id,
    column_id: b.column_id,
    content: b.content_html !== undefined ? { $case: 'html', value: b.content_html } : { $case: 'text', value: b.content ?? '' },
  };
}

/** A mention's JSON fields → its proto fields. */
export function mentionFields(body: { name?: string | undefined; color?: string | undefined; description?: string | undefined }): MentionFields {
  return {
    name: body.name,
    color: body.color,
    description: body.description,
  };
}

type ActAction = NonNullable<ActRequest['action']>;

/**
 * The runner's request for an action: with an Idempotency-Key, a `request_key` derived from it
 * (`keyedId`), so that a retry whose first attempt was applied but never answered changes nothing.
 */
export function actRequest(rundownId: string, action: ActAction, requestKey: string | undefined) {
  return { rundown_id: rundownId, action, ...(requestKey ? { request_key: requestKey } : {}) };
}

/** The deliveries list request of an endpoint for a parsed `deliveriesQuery` (the v1 route and the admin listener's). */
export function listDeliveriesRequest(webhookId: string, query: z.output<typeof deliveriesQuery>) {
  return { webhook_id: webhookId, state: query.state ? deliveryStateNames.toProto(query.state) : 0, limit: query.limit ?? 0, cursor: query.cursor ?? '' };
}

