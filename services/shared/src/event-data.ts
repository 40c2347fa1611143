import {
  Change,
  type Cell,
  type CellEvent,
  type ColumnEvent,
  type CueEvent,
  type Event,
  type MentionEvent,
  type OutputMessageEvent,
  type RundownEvent,
  type TextVariableEvent,
} from './generated/rundown/events/v1/events.js';
import type { Mention } from './generated/rundown/rundown/v1/mentions.js';
import type { OutputMessage } from './generated/rundown/rundown/v1/output_message_record.js';
import type { TextVariable } from './generated/rundown/rundown/v1/text_variables.js';
import { statusEventJson } from './runner-status.js';

/**
 * The thin data of the §7 events (docs/api-decisions.md#events): one mapper per payload, the `data` of
 * the gateway's SSE frame of the same name and of the webhook the event makes (§11). The records some
 * of them carry whole (mention, text variable, output message, cell) are mapped here too, and the
 * gateway's routes answer the same records with the same mappers. Nothing is decided here.
 */

const changes = {
  [Change.CHANGE_CREATED]: 'created',
  [Change.CHANGE_UPDATED]: 'updated',
  [Change.CHANGE_REMOVED]: 'removed',
  [Change.CHANGE_REORDERED]: 'reordered',
} as const satisfies Partial<Record<Change, string>>;

export type ChangeName = (typeof changes)[keyof typeof changes];

/** An event's change as its data names it (an unknown one reads as `updated`). */
export const changeName = (c: Change): ChangeName => changes[c as keyof typeof changes] ?? 'updated';

const iso = (d: Date | undefined) => (d ? d.toISOString() : null);
/** A record's audit stamp: a record always carries it (docs/api-decisions.md#envelope). */
const stamp = (d: Date | undefined) => d!.toISOString();

/** The mention record (docs/api-decisions.md#records). */
export function mentionJson(m: Mention) {
  return { id: m.id, name: m.name, color: m.color, description: m.description, created_at: stamp(m.created_at), updated_at: stamp(m.updated_at) };
}

/** The text variable record. */
export function textVariableJson(v: TextVariable) {
  return { key: v.key, value: v.value, created_at: stamp(v.created_at), updated_at: stamp(v.updated_at) };
}

/** The output message record. */
export function outputMessageJson(m: OutputMessage) {
  return { text: m.text, visible: m.visible, color: m.color, bold: m.bold, underline: m.underline, updated_at: iso(m.updated_at) };
}

/** The cell record a `cell` event carries (an empty cell of the coordinate when the event has none). */
export function cellEventJson(c: Cell | undefined, cueId: string, columnId: string) {
  return {
    cue_id: c?.cue_id || cueId,
    column_id: c?.column_id || columnId,
    content: c?.content ?? '',
    content_html: c?.content_html ?? '',
    created_at: iso(c?.created_at),
    updated_at: iso(c?.updated_at),
  };
}

/** `rundown`, `cue` and `column` { change, id }. */
export const idEventData = (e: RundownEvent | CueEvent | ColumnEvent) => ({ change: changeName(e.change), id: e.id });

/** `cell` { change, cue_id, column_id, cell }. */
export const cellEventData = (e: CellEvent) => ({
  change: changeName(e.change),
  cue_id: e.cue_id,
  column_id: e.column_id,
  cell: cellEventJson(e.cell, e.cue_id, e.column_id),
});

/** `mention` { change, id, mention? }. */
export const mentionEventData = (e: MentionEvent) => ({ change: changeName(e.change), id: e.id, ...(e.mention ? { mention: mentionJson(e.mention) } : {}) });

/** `text_variable` { change, id (the key), text_variable? }. */
export const textVariableEventData = (e: TextVariableEvent) => ({
  change: changeName(e.change),
  id: e.key,
  ...(e.text_variable ? { text_variable: textVariableJson(e.text_variable) } : {}),
});

/** `output_message` { change, output_message? }. */
export const outputMessageEventData = (e: OutputMessageEvent) => ({
  change: changeName(e.change),
  ...(e.output_message ? { output_message: outputMessageJson(e.output_message) } : {}),
});

/** An event's §7 name, the change it reports (`changed` for a status) and its data. */
export type EventData =
  | { name: 'rundown' | 'cue' | 'column' | 'cell' | 'mention' | 'text_variable' | 'output_message'; change: ChangeName; data: { change: ChangeName } & Record<string, unknown> }
  | { name: 'status'; change: 'changed'; data: ReturnType<typeof statusEventJson> };

/** The data of an event, by its payload; undefined for a payload this build does not know (a newer producer). */
export function eventData(event: Event): EventData | undefined {
  const p = event.payload;
  const thin = (name: Exclude<EventData['name'], 'status'>, data: { change: ChangeName } & Record<string, unknown>): EventData => ({ name, change: data.change, data });
  switch (p?.$case) {
    case 'rundown':
    case 'cue':
    case 'column':
      return thin(p.$case, idEventData(p.value));
    case 'cell':
      return thin('cell', cellEventData(p.value));
    case 'mention':
      return thin('mention', mentionEventData(p.value));
    case 'text_variable':
      return thin('text_variable', textVariableEventData(p.value));
    case 'output_message':
      return thin('output_message', outputMessageEventData(p.value));
    case 'status':
      return { name: 'status', change: 'changed', data: statusEventJson(p.value) };
    default:
      return undefined;
  }
}
