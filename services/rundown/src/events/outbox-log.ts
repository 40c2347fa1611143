import { newEvent, Outbox, type Event, type EventPayload, type Db } from '@rundown/shared';
import { Change } from '@rundown/shared/proto/rundown/events/v1/events';
import type { Change as DomainChange, DomainEvent, EventLog, EventScope } from '../domain/events.js';
import { columnMessage, cueMessage, mentionMessage, outputMessageMessage, rundownMessage, textVariableMessage } from '../grpc/messages.js';

/** The rundown service's outbox: table `rundown.outbox`, events stamped `source: "rundown"`. */
export const rundownOutbox = new Outbox('rundown', 'rundown');

const changes: Record<DomainChange, Change> = {
  created: Change.CHANGE_CREATED,
  updated: Change.CHANGE_UPDATED,
  removed: Change.CHANGE_REMOVED,
  reordered: Change.CHANGE_REORDERED,
};

/** Domain event -> `rundown.events.v1` payload, records mapped as the RPCs answer them. */
export function eventPayload(e: DomainEvent): EventPayload {
  const change = changes[e.change];
  switch (e.kind) {
    case 'rundown':
      return { $case: 'rundown', value: { change, id: e.id, rundown: e.record && rundownMessage(e.record) } };
    case 'cue':
      return { $case: 'cue', value: { change, id: e.id, cue: e.record && cueMessage(e.record) } };
    case 'column':
      return { $case: 'column', value: { change, id: e.id, column: e.record && columnMessage(e.record) } };
    case 'mention':
      return { $case: 'mention', value: { change, id: e.id, mention: e.record && mentionMessage(e.record) } };
    case 'text_variable':
      return { $case: 'text_variable', value: { change, key: e.key, text_variable: e.record && textVariableMessage(e.record) } };
    case 'output_message':
      return { $case: 'output_message', value: { change, output_message: outputMessageMessage(e.record) } };
  }
}

/** The event log of the rundown service: its transactional outbox. */
export class OutboxEventLog implements EventLog {
  constructor(private readonly outbox: Outbox = rundownOutbox) {}

  async record(tx: Db, rundown: EventScope, events: DomainEvent[]): Promise<void> {
    if (!events.length) return;
    const at = new Date();
    await this.outbox.enqueue(
      tx,
      events.map((e): Event => newEvent(rundown.id, rundown.team_id, eventPayload(e), at)),
    );
  }
}
