import type { CallerContext } from '@rundown/shared/core';
import type { Cue } from '@rundown/shared/proto/rundown/rundown/v1/cues';
import type { Rundown } from '@rundown/shared/proto/rundown/rundown/v1/rundown';
import type { Status } from '@rundown/shared/proto/rundown/runner/v1/runner';

/**
 * What a v0 view is built from: the rundown, its runner status and a cue, read for the caller (a
 * verified v0 token's team). Implemented over gRPC in `clients/content.ts`.
 */
export interface ContentSource {
  rundown(rundownId: string, caller: CallerContext): Promise<Rundown>;
  status(rundownId: string, caller: CallerContext): Promise<Status>;
  cue(rundownId: string, cueId: string, caller: CallerContext): Promise<Cue>;
}
