import type { RundownRow } from './model.js';

/**
 * The gateway's read model of rundown records (`GET /v1/rundowns/:id` is served from it; the shared
 * `rundown-records.ts` has its shape). The rundown context keeps it current:
 * - `written`: after a write committed and before it answers, with every rundown whose row the
 *   write touched (the database lists them: the RecordVersion migration), so a read that starts
 *   after the answer, on any gateway, sees the write;
 * - `read`: a record read outside any write (the read model had none) fills it, in the background.
 * Both keep only a version newer than the stored one. Never throws: a write that committed is
 * answered whatever happens here (a failure is logged and counted; the read model's key expiry
 * bounds what it leaves behind).
 */
export interface RecordReadModel {
  written(rundownIds: readonly string[]): Promise<void>;
  read(row: RundownRow): void;
}

/** For wirings without a read model (the medium tests of the rundown domain alone). */
export const noRecordReadModel: RecordReadModel = { written: () => Promise.resolve(), read: () => undefined };
