import { EventBuffer } from 'better-sse';
import { cueDeadline, statusEventJson, type Event } from '@rundown/shared/core';
import { Change, type Cell } from '@rundown/shared/proto/rundown/events/v1/events';
import type { disconnectReasons } from './frame-schemas.js';
import type { EventName } from './subscription.js';
import { columnJson, cueJson, mentionJson, outputMessageJson, rundownJson, textVariableJson, type StatusJson } from '../http/wire.js';

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

const changes: Record<number, string> = {
  [Change.CHANGE_CREATED]: 'created',
  [Change.CHANGE_UPDATED]: 'updated',
  [Change.CHANGE_REMOVED]: 'removed',
  [Change.CHANGE_REORDERED]: 'reordered',
};
const changeName = (c: Change) => changes[c] ?? 'updated';

/** Whether a status shows its active cue past its deadline (running, and the live duration used up at `server_time`). */
export function isOverTime(s: StatusJson): boolean {
  return s.state === 'running' && s.active_cue !== null && s.server_time >= cueDeadline(s.active_cue);
}

const iso = (d: Date | undefined) => (d ? d.toISOString() : null);

export function cellJson(c: Cell | undefined, cueId: string, columnId: string) {
  return {
    cue_id: c?.cue_id || cueId,
    column_id: c?.column_id || columnId,
    content: c?.content ?? '',
    content_html: c?.content_html ?? '',
    created_at: iso(c?.created_at),
    updated_at: iso(c?.updated_at),
  };
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

/** Event → frame bodies, or undefined for a payload this gateway does not know (a newer producer). */
function frameBodies(event: Event): FrameBodies | undefined {
  const p = event.payload;
  switch (p?.$case) {
    case 'rundown': {
      const change = changeName(p.value.change);
      const thin = { change, id: p.value.id };
      return { name: 'rundown', thin, fat: p.value.rundown ? { ...thin, rundown: rundownJson(p.value.rundown) } : thin, removesRundown: change === 'removed' };
    }
    case 'cue': {
      const thin = { change: changeName(p.value.change), id: p.value.id };
      return { name: 'cue', thin, fat: p.value.cue ? { ...thin, cue: cueJson(p.value.cue) } : thin };
    }
    case 'column': {
      const thin = { change: changeName(p.value.change), id: p.value.id };
      return { name: 'column', thin, fat: p.value.column ? { ...thin, column: columnJson(p.value.column) } : thin };
    }
    case 'cell':
      return {
        name: 'cell',
        thin: { change: changeName(p.value.change), cue_id: p.value.cue_id, column_id: p.value.column_id, cell: cellJson(p.value.cell, p.value.cue_id, p.value.column_id) },
      };
    case 'mention': {
      const m = p.value.mention;
      return { name: 'mention', thin: { change: changeName(p.value.change), id: p.value.id, ...(m ? { mention: mentionJson(m) } : {}) } };
    }
    case 'text_variable': {
      const v = p.value.text_variable;
      return { name: 'text_variable', thin: { change: changeName(p.value.change), id: p.value.key, ...(v ? { text_variable: textVariableJson(v) } : {}) } };
    }
    case 'output_message': {
      const m = p.value.output_message;
      return { name: 'output_message', thin: { change: changeName(p.value.change), ...(m ? { output_message: outputMessageJson(m) } : {}) } };
    }
    case 'status': {
      const thin: StatusJson = statusEventJson(p.value);
      return { name: 'status', thin, revision: p.value.revision, overtime: isOverTime(thin) };
    }
    default:
      return undefined;
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
