import { EventBuffer } from 'better-sse';
import { cueDeadline, eventData, statusEventJson, type Event } from '@rundown/shared/core';
import type { disconnectReasons } from './frame-schemas.js';
import type { EventName } from './subscription.js';
import { columnJson, cueJson, rundownJson, type StatusJson } from '../wire/records.js';

/**
 * SSE framing (docs/api-decisions.md#events): `event:` name, one JSON `data:` line holding the bare object, and an
 * `id:` (the Redis stream entry id) on every frame but `heartbeat`. The text is written by
 * better-sse's EventBuffer (spec-compliant field encoding); each frame is built once and the same
 * Buffer is written to every connection that receives it.
 */
export function frame(name: string, data: unknown, id?: string): Buffer {
  const buffer = new EventBuffer().event(name);
  if (id !== undefined) buffer.id(id);
  return Buffer.from(buffer.data(data).dispatch().read());
}

export type DisconnectReason = (typeof disconnectReasons)[number];

/** `frame` for data already serialized as JSON (a large object written to many connections is serialized once). */
export function jsonFrame(name: string, json: string, id?: string): Buffer {
  const buffer = new EventBuffer({ serializer: (data) => data as string }).event(name);
  if (id !== undefined) buffer.id(id);
  return Buffer.from(buffer.data(json).dispatch().read());
}

export const heartbeatFrame = (at: number) => frame('heartbeat', { at });
export const disconnectFrame = (reason: DisconnectReason, id: string) => frame('disconnect', { reason }, id);

/** Whether a status shows its active cue past its deadline (running, and the live duration used up at `server_time`). */
export function isOverTime(s: StatusJson): boolean {
  return s.state === 'running' && s.active_cue !== null && s.server_time >= cueDeadline(s.active_cue);
}

/** The SSE name of an event and its `data` (thin, and fat where the record can ride along). */
export interface FrameBodies {
  name: EventName | 'status';
  thin: unknown;
  /** Absent when the frame is the same fat or thin. */
  fat?: unknown;
  /** For `status`: its revision (a stream never goes back to an older status). */
  revision?: number;
  /** For `status`: whether it is the one a deadline sends (the cue over time), which keeps the revision. */
  overtime?: boolean;
  /** A `rundown` `removed`: the streams of this rundown end (`rundown_removed`). */
  removesRundown?: boolean;
}

/**
 * Event → frame bodies, or undefined for a payload this gateway does not know (a newer producer). The
 * thin data is the shared §7 mapping (`eventData`, which the webhooks service sends too); the fat forms
 * add the record.
 */
function frameBodies(event: Event): FrameBodies | undefined {
  const thin = eventData(event);
  const p = event.payload;
  if (!thin || !p) return undefined;
  switch (p.$case) {
    case 'rundown':
      return { name: 'rundown', thin: thin.data, fat: p.value.rundown ? { ...thin.data, rundown: rundownJson(p.value.rundown) } : thin.data, removesRundown: thin.change === 'removed' };
    case 'cue':
      return { name: 'cue', thin: thin.data, fat: p.value.cue ? { ...thin.data, cue: cueJson(p.value.cue) } : thin.data };
    case 'column':
      return { name: 'column', thin: thin.data, fat: p.value.column ? { ...thin.data, column: columnJson(p.value.column) } : thin.data };
    case 'status': {
      const status: StatusJson = thin.name === 'status' ? thin.data : statusEventJson(p.value);
      return { name: 'status', thin: status, revision: p.value.revision, overtime: isOverTime(status) };
    }
    default:
      return { name: thin.name, thin: thin.data };
  }
}

/** Stream ids as comparable numbers: `<ms>-<n>` → [ms, n]. */
export type StreamPosition = readonly [number, number];

export function parseStreamId(id: string): StreamPosition | undefined {
  const match = /^(\d{1,16})-(\d{1,16})$/.exec(id);
  if (!match) return undefined;
  const ms = Number(match[1]);
  const n = Number(match[2]);
  return Number.isSafeInteger(ms) && Number.isSafeInteger(n) ? [ms, n] : undefined;
}

export const afterPosition = (a: StreamPosition, b: StreamPosition) => a[0] > b[0] || (a[0] === b[0] && a[1] > b[1]);

/**
 * One event of a rundown's stream as the fan-out delivers it: decoded once, its frames built at
 * most once per form (thin, fat) however many connections receive it.
 */
export class LiveEvent {
  readonly position: StreamPosition;
  private thinFrame: Buffer | undefined;
  private fatFrame: Buffer | undefined;

  constructor(
    readonly id: string,
    readonly bodies: FrameBodies,
  ) {
    this.position = parseStreamId(id) ?? [0, 0];
  }

  get name(): FrameBodies['name'] {
    return this.bodies.name;
  }

  frame(fat: boolean): Buffer {
    if (fat && this.bodies.fat !== undefined) return (this.fatFrame ??= frame(this.bodies.name, this.bodies.fat, this.id));
    return (this.thinFrame ??= frame(this.bodies.name, this.bodies.thin, this.id));
  }

  static from(id: string, event: Event): LiveEvent | undefined {
    const bodies = frameBodies(event);
    return bodies ? new LiveEvent(id, bodies) : undefined;
  }
}
