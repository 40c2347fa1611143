import { bindService, type ServiceBinding } from '@rundown/shared';
import { CoordinateServiceService } from '@rundown/shared/proto/rundown/rundown/v1/coordinates';
import type { CoordinatesService } from '../domain/coordinates.js';
import { columnMessage, cueMessage, mentionMessage, outputMessageMessage, rundownMessage, textVariableMessage } from './messages.js';

/** gRPC ↔ domain mapping for what other contexts ask about a rundown's coordinates; no rules live here. */
export function coordinateHandlers(coordinates: CoordinatesService): ServiceBinding {
  return bindService(CoordinateServiceService, {
    describeCoordinates: async (req, ctx) =>
      coordinates.describe(ctx, req.rundown_id, { cueIds: req.cue_ids, columnIds: req.column_ids, allCues: req.all_cues, allColumns: req.all_columns }),
    rundownsExist: async (req) => ({ existing_ids: await coordinates.existing(req.rundown_ids) }),
    readWithCells: async (req, ctx) => {
      const { rundown, cues, cells } = await coordinates.readWithCells(ctx, req.rundown_id);
      return {
        rundown: rundownMessage(rundown),
        cues: req.include_cues ? cues.map(cueMessage) : [],
        cells: cells.map((c) => ({ ...c, created_at: c.created_at ?? undefined, updated_at: c.updated_at ?? undefined })),
      };
    },
    exportRundown: async (req, ctx) => {
      const read = await coordinates.export(ctx, req.rundown_id);
      return {
        rundown: rundownMessage(read.rundown),
        columns: read.columns.map(columnMessage),
        cues: read.cues.map(cueMessage),
        cells: read.cells,
        mentions: read.mentions.map(mentionMessage),
        text_variables: read.text_variables.map(textVariableMessage),
        output_message: outputMessageMessage(read.output_message),
      };
    },
  }, {
    // The gateway reads with cells and exports; the cells service asks about coordinates (for its callers) and,
    // on its own behalf, which rundowns exist.
    edge: ['readWithCells', 'exportRundown'],
    services: { cells: ['describeCoordinates', 'rundownsExist'] },
  });
}
