import { BinaryReader, BinaryWriter } from '@bufbuild/protobuf/wire';
import { Event, Kind } from '../generated/rundown/events/v1/events.js';
import { newId } from '../ids.js';

export { Event, Kind };

/** The payload cases of an event (the SSE event names of docs/api-decisions.md#events, `status` included). */
export type EventPayload = NonNullable<Event['payload']>;

/** The kind of each event name. */
export const kindOfEvent: Readonly<Record<EventPayload['$case'], Kind>> = {
  rundown: Kind.KIND_RUNDOWN,
  cue: Kind.KIND_CUE,
  column: Kind.KIND_COLUMN,
  cell: Kind.KIND_CELL,
  mention: Kind.KIND_MENTION,
  text_variable: Kind.KIND_TEXT_VARIABLE,
  output_message: Kind.KIND_OUTPUT_MESSAGE,
  status: Kind.KIND_STATUS,
};

/**
 * A new event: a fresh `evt_` id, the kind that agrees with the payload, `occurred_at` now. The
 * `source` is the outbox's, filled in by `Outbox.enqueue`.
 */
export function newEvent(rundownId: string, teamId: string, payload: EventPayload, occurredAt = new Date()): Event {
  return {
    event_id: newId('evt'),
    rundown_id: rundownId,
    team_id: teamId,
    kind: kindOfEvent[payload.$case],
    occurred_at: occurredAt,
    source: '',
    payload,
  };
}

/**
 * One writer for every event (encoding is synchronous): `finish` keeps its buffer, so a batch of
 * events does not allocate and regrow a writer each (a cells:bulk encodes 500).
 */
const writer = new BinaryWriter();

/**
 * The one wire encoding of an event wherever it is stored (the outbox row, the Redis Stream entry):
 * the protobuf binary encoding of `rundown.events.v1.Event`. Compact, versioned by the proto, and
 * decodable by any consumer with the generated code.
 */
export function encodeEvent(event: Event): Buffer {
  try {
    const bytes = Event.encode(event, writer).finish();
    // `finish` answers a copy of its bytes: wrapped, not copied again.
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  } catch (error) {
    writer.finish(); // reset: a half-written event must not prefix the next one
    throw error;
  }
}

export function decodeEvent(bytes: Uint8Array): Event {
  return Event.decode(bytes);
}

/** `Event.kind`'s field number (events.proto). */
const KIND_FIELD = 4;

/**
 * The kind of an encoded event, read without decoding it: the top-level fields are walked and
 * skipped (the payload unread) until `kind`. For the relay, which names each event's kind in the
 * index entry so followers can pass over kinds they do not handle without fetching the event.
 */
export function encodedEventKind(bytes: Uint8Array): Kind {
  const reader = new BinaryReader(bytes);
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (field === KIND_FIELD) return reader.int32() as Kind;
    reader.skip(wireType, field);
  }
  // proto3 leaves a zero enum out of the encoding.
  return Kind.KIND_UNSPECIFIED;
}
