import { createClient, type CallerContext, type ContextSigner } from '@rundown/shared/core';
import { CueServiceService, type Cue } from '@rundown/shared/proto/rundown/rundown/v1/cues';
import { RundownServiceService, type Rundown } from '@rundown/shared/proto/rundown/rundown/v1/rundown';
import { RunnerServiceService, type Status } from '@rundown/shared/proto/rundown/runner/v1/runner';
import type { ContentSource } from '../domain/content-source.js';

/** The content port over gRPC: the rundown service (rundown, cues) and the runner (status). */
export class GrpcContentSource implements ContentSource {
  private readonly rundowns;
  private readonly cues;
  private readonly runner;

  /**
   * `signer`: the `edge` principal, as the gateway's edge signs for v1 and v0 HTTP: a rundown is read on
   * behalf of a verified v0 token, with the token's team in the context.
   */
  constructor(addresses: { rundown: string; runner: string }, options: { signer: ContextSigner; deadlineMs: number }) {
    this.rundowns = createClient(RundownServiceService, addresses.rundown, options);
    this.cues = createClient(CueServiceService, addresses.rundown, options);
    this.runner = createClient(RunnerServiceService, addresses.runner, options);
  }

  rundown(rundownId: string, caller: CallerContext): Promise<Rundown> {
    return this.rundowns.getRundown({ rundown_id: rundownId }, caller);
  }

  status(rundownId: string, caller: CallerContext): Promise<Status> {
    return this.runner.getStatus({ rundown_id: rundownId }, caller);
  }

  cue(rundownId: string, cueId: string, caller: CallerContext): Promise<Cue> {
    return this.cues.getCue({ rundown_id: rundownId, cue_id: cueId }, caller);
  }

  close(): void {
    for (const client of [this.rundowns, this.cues, this.runner]) client.close();
  }
}
