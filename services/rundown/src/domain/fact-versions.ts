import type { RundownFact } from '@rundown/shared';

/**
 * Where the rundown context announces that facts other services keep of a rundown changed: its
 * layout (kept by the cells service: which cues exist, their type and lock, which public columns
 * exist and their type, whether the rundown lives) and its order (kept by the runner: the cues in
 * show order with their records, the planned start, timezone and team, whether it lives). The
 * keepers use what they hold only while the fact's version is unchanged (the shared
 * `fact-versions.ts`).
 *
 * Called after the change committed and before the write answers, so any read that starts after
 * the answer sees the new version. Never throws: a write that committed is answered whatever
 * happens here (a failure is logged and counted; the keepers' max age bounds what it leaves stale).
 */
export interface FactVersions {
  changed(rundownId: string, facts: readonly RundownFact[]): Promise<void>;
}

/** For wirings without keepers to tell (the medium tests of the rundown domain alone). */
export const noFactVersions: FactVersions = { changed: () => Promise.resolve() };
