import { eventData, type Event } from '@rundown/shared';

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

/**
 * The webhook an event makes: `data` is the event's §7 data (the shared `eventData`, the thin object of
 * the gateway's SSE frame of the same name), `type` its name and change (`status.changed`). Undefined
 * for a payload this service does not know (a newer producer). `timing` is made apart (it asks the runner).
 */
export function outgoing(event: Event): Outgoing | undefined {
  const made = eventData(event);
  return made && { name: made.name, type: `${made.name}.${made.change}`, data: made.data };
}

/** The body of a delivery (§11), serialized once: it is what is signed and sent on every attempt. */
export function deliveryBody(type: string, at: Date, rundownId: string | null, eventId: string, data: Record<string, unknown>): string {
  return JSON.stringify({ type, timestamp: at.toISOString(), data: { ...(rundownId !== null ? { rundown_id: rundownId } : {}), event_id: eventId, ...data } });
}
