import { createClient, type PromiseClient } from '@rundown/shared';
import { AuthServiceService } from '@rundown/shared/proto/rundown/auth/v1/auth';
import { ColumnServiceService } from '@rundown/shared/proto/rundown/rundown/v1/columns';
import { CueServiceService } from '@rundown/shared/proto/rundown/rundown/v1/cues';
import { MentionServiceService } from '@rundown/shared/proto/rundown/rundown/v1/mentions';
import { OutputMessageServiceService } from '@rundown/shared/proto/rundown/rundown/v1/output_message';
import { RundownServiceService } from '@rundown/shared/proto/rundown/rundown/v1/rundown';
import { RunnerServiceService } from '@rundown/shared/proto/rundown/runner/v1/runner';
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
  runner: PromiseClient<typeof RunnerServiceService>;
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
    runner: createClient(RunnerServiceService, config.RUNNER_ADDR, options),
  };
}

export function closeClients(clients: Clients): void {
  for (const client of Object.values(clients)) client.close();
}
