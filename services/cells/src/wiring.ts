import { CursorCodec, type Database } from '@rundown/shared';
import { CellsService } from './domain/cells.js';
import type { CoordinatesPort } from './domain/coordinates.js';
import { inThreadContents, type HtmlContents } from './domain/html-contents.js';
import { OutboxCellEventLog } from './events/outbox-log.js';
import { CellsRepository } from './repositories/cells.js';

/**
 * The cells context's domain over its repository and outbox log, given its ports (what the rundown
 * service says a coordinate is, and where HTML is sanitized): what the gRPC handlers serve and what
 * the medium tier exercises against real PostgreSQL (no transport).
 */
export function cellsDomain(db: Database, options: { coordinates: CoordinatesPort; cursorSecret: string; html?: HtmlContents }) {
  return { cells: new CellsService(new CellsRepository(db), options.coordinates, new CursorCodec(options.cursorSecret), new OutboxCellEventLog(), options.html ?? inThreadContents) };
}
