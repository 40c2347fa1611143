import { statusEventJson, type Event } from '@rundown/shared';
import { Change } from '@rundown/shared/proto/rundown/events/v1/events';

/** What an endpoint may subscribe to (§11): §7's names plus `status` and `timing`; `*` is all of them. */
export const EVENT_NAMES = ['rundown', 'cue', 'column', 'cell', 'mention', 'text_variable', 'output_message', 'status', 'timing'] as const;
export type EventName = (typeof EVENT_NAMES)[number];
export const ALL = '*';

/** The names that are not subscribable, in the order given (empty: all known). */
export function unknownEventNames(names: readonly string[]): string[] {
  return names.filter((n) => n !== ALL && !(EVENT_NAMES as readonly string[]).includes(n));
}

/** Whether an endpoint subscribed to `events` (and to `rundownId`, or every rundown when null) receives this event. */
export function subscribes(endpoint: { events: readonly string[]; rundown_id: string | null }, name: EventName, rundownId: string): boolean {
  if (endpoint.rundown_id !== null && endpoint.rundown_id !== rundownId) return false;
  return endpoint.events.includes(ALL) || endpoint.events.includes(name);
}

/** One webhook to make of an event: its `type` (`cue.updated`) and the `data` besides `rundown_id` and `event_id`. */
export interface Outgoing {
  name: EventName;
  type: string;
  data: Record<string, unknown>;
}

const changes: Record<number, string> = {
  [Change.CHANGE_CREATED]: 'created',
  [Change.CHANGE_UPDATED]: 'updated',
  [Change.CHANGE_REMOVED]: 'removed',
  [Change.CHANGE_REORDERED]: 'reordered',
};
const changeName = (c: Change) => changes[c] ?? 'updated';
const iso = (d: Date | undefined) => (d ? d.toISOString() : null);


/**
 * The webhook an event makes: `data` is the thin object of the §7 frame of the same name (the
 * gateway's SSE frames, services/gateway/src/events/frames.ts). Undefined for a payload this
 * service does not know (a newer producer). `timing` is made apart (it asks the runner).
 */
export function outgoing(event: Event): Outgoing | undefined {
  const p = event.payload;
  const make = (name: EventName, change: string, data: Record<string, unknown>): Outgoing => ({ name, type: `${name}.${change}`, data });
  switch (p?.$case) {
    case 'rundown':
      return make('rundown', changeName(p.value.change), { change: changeName(p.value.change), id: p.value.id });
    case 'cue':
      return make('cue', changeName(p.value.change), { change: changeName(p.value.change), id: p.value.id });
    case 'column':
      return make('column', changeName(p.value.change), { change: changeName(p.value.change), id: p.value.id });
    case 'cell': {
      const c = p.value.cell;
      const change = changeName(p.value.change);
      return make('cell', change, {
        change,
        cue_id: p.value.cue_id,
        column_id: p.value.column_id,
        cell: {
          cue_id: c?.cue_id || p.value.cue_id,
          column_id: c?.column_id || p.value.column_id,
          content: c?.content ?? '',
          content_html: c?.content_html ?? '',
          created_at: iso(c?.created_at),
          updated_at: iso(c?.updated_at),
        },
      });
    }
    case 'mention': {
      const m = p.value.mention;
      const change = changeName(p.value.change);
      return make('mention', change, {
        change,
        id: p.value.id,
        ...(m ? { mention: { id: m.id, name: m.name, color: m.color, description: m.description, created_at: iso(m.created_at), updated_at: iso(m.updated_at) } } : {}),
      });
    }
    case 'text_variable': {
      const v = p.value.text_variable;
      const change = changeName(p.value.change);
      return make('text_variable', change, {
        change,
        id: p.value.key,
        ...(v ? { text_variable: { key: v.key, value: v.value, created_at: iso(v.created_at), updated_at: iso(v.updated_at) } } : {}),
      });
    }
    case 'output_message': {
      const m = p.value.output_message;
      const change = changeName(p.value.change);
      return make('output_message', change, {
        change,
        ...(m ? { output_message: { text: m.text, visible: m.visible, color: m.color, bold: m.bold, underline: m.underline, updated_at: iso(m.updated_at) } } : {}),
      });
    }
    case 'status':
      return make('status', 'changed', statusEventJson(p.value));
    default:
      return undefined;
  }
}

/** The body of a delivery (§11), serialized once: it is what is signed and sent on every attempt. */
export function deliveryBody(type: string, at: Date, rundownId: string | null, eventId: string, data: Record<string, unknown>): string {
  return JSON.stringify({ type, timestamp: at.toISOString(), data: { ...(rundownId !== null ? { rundown_id: rundownId } : {}), event_id: eventId, ...data } });
}
