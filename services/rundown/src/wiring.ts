import type { Database } from '@rundown/shared';
import { RundownAccess } from './domain/access.js';
import { noCellsYet, type CellsPort } from './domain/cells-port.js';
import { ColumnsService } from './domain/columns.js';
import { CoordinatesService } from './domain/coordinates.js';
import { CuesService } from './domain/cues.js';
import { CursorCodec } from './domain/cursor.js';
import type { EventLog } from './domain/events.js';
import { noFactVersions, type FactVersions } from './domain/fact-versions.js';
import type { RecordReadModel } from './domain/record-read-model.js';
import { MentionsService } from './domain/mentions.js';
import { OutputMessageService } from './domain/output-message.js';
import { PlayableOrderService } from './domain/playable-order.js';
import { RundownsService, type PlanFacts } from './domain/rundowns.js';
import { TextVariablesService } from './domain/text-variables.js';
import { OutboxEventLog } from './events/outbox-log.js';
import { ColumnsRepository } from './repositories/columns.js';
import { CoordinatesRepository } from './repositories/coordinates.js';
import { CuesRepository } from './repositories/cues.js';
import { MentionsRepository } from './repositories/mentions.js';
import { OutputMessagesRepository } from './repositories/output-messages.js';
import { RundownsRepository } from './repositories/rundowns.js';
import { TextVariablesRepository } from './repositories/text-variables.js';
import { PgTransactions } from './repositories/transactions.js';

export type RundownDomain = ReturnType<typeof rundownDomain>;

/**
 * The rundown context's domain services over its repositories: what the gRPC handlers serve and
 * what the medium test tier exercises against real PostgreSQL (the same wiring, no transport).
 */
export function rundownDomain(
  database: Database,
  options: {
    cursorSecret: string;
    plan: PlanFacts;
    cells?: CellsPort;
    events?: EventLog;
    versions?: FactVersions;
    /** The gateway's record read model, kept current by every write and filled by reads. */
    records?: (db: Database, repo: RundownsRepository) => RecordReadModel;
  },
) {
  const rundownsRepo = new RundownsRepository();
  const records = options.records?.(database, rundownsRepo);
  const transactions = new PgTransactions(database, records);
  const events = options.events ?? new OutboxEventLog();
  const cells = options.cells ?? noCellsYet;
  // Told after every committed change of the facts the cells service (layout) and the runner (order) keep.
  const versions = options.versions ?? noFactVersions;
  const cuesRepo = new CuesRepository();
  const columnsRepo = new ColumnsRepository();
  const mentionsRepo = new MentionsRepository();
  const textVariablesRepo = new TextVariablesRepository();
  const outputMessagesRepo = new OutputMessagesRepository();
  const rundowns = new RundownsService(transactions, rundownsRepo, cuesRepo, columnsRepo, cells, events, new CursorCodec(options.cursorSecret), options.plan, versions, {
    mentions: mentionsRepo,
    textVariables: textVariablesRepo,
    outputMessages: outputMessagesRepo,
  }, records);
  // Every content write of a rundown goes through this: it locks the rundown row first.
  const access = new RundownAccess(transactions, rundowns, rundownsRepo, events);
  return {
    rundowns,
    cues: new CuesService(transactions, rundowns, access, cuesRepo, cells, versions),
    coordinates: new CoordinatesService(transactions, rundowns, cuesRepo, new CoordinatesRepository(), cells, {
      columns: columnsRepo,
      mentions: mentionsRepo,
      textVariables: textVariablesRepo,
      outputMessages: outputMessagesRepo,
    }),
    columns: new ColumnsService(access, columnsRepo, cells, versions),
    mentions: new MentionsService(access, mentionsRepo),
    textVariables: new TextVariablesService(access, textVariablesRepo),
    outputMessage: new OutputMessageService(access, outputMessagesRepo),
    playableOrder: new PlayableOrderService(transactions, rundowns, rundownsRepo, cuesRepo),
  };
}
