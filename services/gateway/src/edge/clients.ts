import { createClient, limits, type PromiseClient } from '@rundown/shared/core';
import { AuthServiceService } from '@rundown/shared/proto/rundown/auth/v1/auth';
import { AuthAdminServiceService } from '@rundown/shared/proto/rundown/auth/v1/auth_admin';
import { CellServiceService } from '@rundown/shared/proto/rundown/cells/v1/cells';
import { ColumnServiceService } from '@rundown/shared/proto/rundown/rundown/v1/columns';
import { CoordinateServiceService } from '@rundown/shared/proto/rundown/rundown/v1/coordinates';
import { CueServiceService } from '@rundown/shared/proto/rundown/rundown/v1/cues';
import { MentionServiceService } from '@rundown/shared/proto/rundown/rundown/v1/mentions';
import { OutputMessageServiceService } from '@rundown/shared/proto/rundown/rundown/v1/output_message';
import { RundownServiceService } from '@rundown/shared/proto/rundown/rundown/v1/rundown';
import { RunnerAdminServiceService, RunnerServiceService } from '@rundown/shared/proto/rundown/runner/v1/runner';
import { RundownAdminServiceService } from '@rundown/shared/proto/rundown/rundown/v1/rundown_admin';
import { TextVariableServiceService } from '@rundown/shared/proto/rundown/rundown/v1/text_variables';
import { WebhookAdminServiceService, WebhookServiceService } from '@rundown/shared/proto/rundown/webhooks/v1/webhooks';
import type { GatewayConfig } from '../config.js';

/**
 * The gateway's clients. Each signs the caller context as one principal: `edge` (on behalf of the
 * request's API token), `service: gateway` (its own errands: keys, team limits) or, for the admin
 * listener only, `admin` on the services' admin ports.
 */
export interface Clients {
  /** The gateway's own errands (verification keys, team limits Redis lacks). */
  auth: PromiseClient<typeof AuthServiceService>;
  rundown: PromiseClient<typeof RundownServiceService>;
  /** The same service for a large create (over limits.wholeRundownLargeCells cells) and every import, with a deadline to match (limits.wholeRundownWriteMs). */
  rundownWhole: PromiseClient<typeof RundownServiceService>;
  cues: PromiseClient<typeof CueServiceService>;
  columns: PromiseClient<typeof ColumnServiceService>;
  mentions: PromiseClient<typeof MentionServiceService>;
  textVariables: PromiseClient<typeof TextVariableServiceService>;
  outputMessage: PromiseClient<typeof OutputMessageServiceService>;
  /** Reads that side-load cells (`?include=cells`), composed by the rundown service in one snapshot. */
  withCells: PromiseClient<typeof CoordinateServiceService>;
  cells: PromiseClient<typeof CellServiceService>;
  runner: PromiseClient<typeof RunnerServiceService>;
  webhooks: PromiseClient<typeof WebhookServiceService>;
}

/** The admin services; only the admin listener holds these. */
export interface AdminClients {
  auth: PromiseClient<typeof AuthAdminServiceService>;
  rundown: PromiseClient<typeof RundownAdminServiceService>;
  runner: PromiseClient<typeof RunnerAdminServiceService>;
  webhooks: PromiseClient<typeof WebhookAdminServiceService>;
}

export function createClients(config: GatewayConfig): Clients {
  const keys = config.INTERNAL_CONTEXT_KEYS;
  const edge = { deadlineMs: config.GRPC_DEADLINE_MS, signer: keys.signer({ kind: 'edge' }) };
  return {
    auth: createClient(AuthServiceService, config.AUTH_ADDR, { ...edge, signer: keys.signer({ kind: 'service', name: 'gateway' }) }),
    rundown: createClient(RundownServiceService, config.RUNDOWN_ADDR, edge),
    // Its create stores the cells within limits.wholeRundownWriteMs; this waits that and a margin.
    rundownWhole: createClient(RundownServiceService, config.RUNDOWN_ADDR, { ...edge, deadlineMs: Math.max(config.GRPC_DEADLINE_MS, limits.wholeRundownWriteMs + 10_000) }),
    // Served by the rundown service too (its bounded context owns a rundown's content).
    cues: createClient(CueServiceService, config.RUNDOWN_ADDR, edge),
    columns: createClient(ColumnServiceService, config.RUNDOWN_ADDR, edge),
    mentions: createClient(MentionServiceService, config.RUNDOWN_ADDR, edge),
    textVariables: createClient(TextVariableServiceService, config.RUNDOWN_ADDR, edge),
    outputMessage: createClient(OutputMessageServiceService, config.RUNDOWN_ADDR, edge),
    // Its export answers a whole rundown, cells included (over gRPC's default 4 MB at the caps).
    withCells: createClient(CoordinateServiceService, config.RUNDOWN_ADDR, { ...edge, channelOptions: { 'grpc.max_receive_message_length': limits.exportMessageBytes } }),
    cells: createClient(CellServiceService, config.CELLS_ADDR, edge),
    runner: createClient(RunnerServiceService, config.RUNNER_ADDR, edge),
    webhooks: createClient(WebhookServiceService, config.WEBHOOKS_ADDR, edge),
  };
}

export function createAdminClients(config: GatewayConfig): AdminClients {
  const admin = { deadlineMs: config.GRPC_DEADLINE_MS, signer: config.INTERNAL_CONTEXT_KEYS.signer({ kind: 'admin' }) };
  return {
    auth: createClient(AuthAdminServiceService, config.AUTH_ADMIN_ADDR, admin),
    rundown: createClient(RundownAdminServiceService, config.RUNDOWN_ADMIN_ADDR, admin),
    runner: createClient(RunnerAdminServiceService, config.RUNNER_ADMIN_ADDR, admin),
    webhooks: createClient(WebhookAdminServiceService, config.WEBHOOKS_ADMIN_ADDR, admin),
  };
}

export function closeClients(clients: Clients | AdminClients): void {
  for (const client of Object.values(clients)) client.close();
}
