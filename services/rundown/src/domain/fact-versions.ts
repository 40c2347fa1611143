/**
 * Where the rundown context announces that a rundown's layout facts changed: which cues exist,
 * their type and lock (`prevent_edits`), which public columns exist and their type, whether the
 * rundown lives. The cells service caches those facts per rundown and keeps using them only while
 * the rundown's layout version is unchanged (services/cells/README.md, "Layout cache").
 *
 * Called after the change committed and before the write answers, so any read that starts after
 * the answer sees the new version. Never throws: a write that committed is answered whatever
 * happens here (a failure is logged and counted; the cache's max age bounds what it leaves stale).
 */
export interface LayoutVersions {
  changed(rundownId: string): Promise<void>;
}

/** For wirings without a cells cache to tell (the medium tests of the rundown domain alone). */
export const noLayoutVersions: LayoutVersions = { changed: () => Promise.resolve() };
