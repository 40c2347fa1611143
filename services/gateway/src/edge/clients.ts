import { createClient, type PromiseClient } from '@rundown/shared';
import { AuthServiceService } from '@rundown/shared/proto/rundown/auth/v1/auth';
import { CueServiceService } from '@rundown/shared/proto/rundown/rundown/v1/cues';
import { RundownServiceService } from '@rundown/shared/proto/rundown/rundown/v1/rundown';
import type { GatewayConfig } from '../config.js';

export interface Clients {
  auth: PromiseClient<typeof AuthServiceService>;
  rundown: PromiseClient<typeof RundownServiceService>;
  cues: PromiseClient<typeof CueServiceService>;
}

export function createClients(config: GatewayConfig): Clients {
  const options = { deadlineMs: config.GRPC_DEADLINE_MS };
  return {
    auth: createClient(AuthServiceService, config.AUTH_ADDR, options),
    rundown: createClient(RundownServiceService, config.RUNDOWN_ADDR, options),
    cues: createClient(CueServiceService, config.RUNDOWN_ADDR, options),
  };
}

export function closeClients(clients: Clients): void {
  for (const client of Object.values(clients)) client.close();
}
