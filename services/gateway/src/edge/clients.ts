import { createClient, type PromiseClient } from '@rundown/shared';
import { AuthServiceService } from '@rundown/shared/proto/rundown/auth/v1/auth';
import { CellServiceService } from '@rundown/shared/proto/rundown/cells/v1/cells';
import { ColumnServiceService } from '@rundown/shared/proto/rundown/rundown/v1/columns';
import { CoordinateServiceService } from '@rundown/shared/proto/rundown/rundown/v1/coordinates';
import { CueServiceService } from '@rundown/shared/proto/rundown/rundown/v1/cues';
import { MentionServiceService } from '@rundown/shared/proto/rundown/rundown/v1/mentions';
import { OutputMessageServiceService } from '@rundown/shared/proto/rundown/rundown/v1/output_message';
import { RundownServiceService } from '@rundown/shared/proto/rundown/rundown/v1/rundown';
import { TextVariableServiceService } from '@rundown/shared/proto/rundown/rundown/v1/text_variables';
import type { GatewayConfig } from '../config.js';

export interface Clients {
  auth: PromiseClient<typeof AuthServiceService>;
  rundown: PromiseClient<typeof RundownServiceService>;
  cues: PromiseClient<typeof CueServiceService>;
  columns: PromiseClient<typeof ColumnServiceService>;
  mentions: PromiseClient<typeof MentionServiceService>;
  textVariables: PromiseClient<typeof TextVariableServiceService>;
  outputMessage: PromiseClient<typeof OutputMessageServiceService>;
  /** Reads that side-load cells (`?include=cells`), composed by the rundown service in one snapshot. */
  withCells: PromiseClient<typeof CoordinateServiceService>;
  cells: PromiseClient<typeof CellServiceService>;
}

export function createClients(config: GatewayConfig): Clients {
  const options = { deadlineMs: config.GRPC_DEADLINE_MS };
  return {
    auth: createClient(AuthServiceService, config.AUTH_ADDR, options),
    rundown: createClient(RundownServiceService, config.RUNDOWN_ADDR, options),
    // Served by the rundown service too (its bounded context owns a rundown's content).
    cues: createClient(CueServiceService, config.RUNDOWN_ADDR, options),
    columns: createClient(ColumnServiceService, config.RUNDOWN_ADDR, options),
    mentions: createClient(MentionServiceService, config.RUNDOWN_ADDR, options),
    textVariables: createClient(TextVariableServiceService, config.RUNDOWN_ADDR, options),
    outputMessage: createClient(OutputMessageServiceService, config.RUNDOWN_ADDR, options),
    withCells: createClient(CoordinateServiceService, config.RUNDOWN_ADDR, options),
    cells: createClient(CellServiceService, config.CELLS_ADDR, options),
  };
}

export function closeClients(clients: Clients): void {
  for (const client of Object.values(clients)) client.close();
}
