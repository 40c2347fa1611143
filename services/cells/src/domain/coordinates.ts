import type { CallerContext } from '@rundown/shared';

/** What the rundown context says about a rundown's coordinates (only what exists and is public). */
export interface Layout {
  cues: { id: string; type: string; prevent_edits: boolean }[];
  columns: { id: string; type: string }[];
}

export interface LayoutQuery {
  cueIds?: string[];
  columnIds?: string[];
  allCues?: boolean;
  allColumns?: boolean;
  /** Ask the rundown context itself, never a cache of it (the checks of a write). */
  fresh?: boolean;
}

/**
 * The rundown context, as the cells context needs it. The caller's context travels with the
 * question, so the rundown service applies the team and token scope (`rundowns.not_found`).
 */
export interface CoordinatesPort {
  describe(ctx: CallerContext, rundownId: string, query: LayoutQuery): Promise<Layout>;
  /** Which of these rundowns exist (live); asked by the orphan collector on its own behalf. */
  existing(rundownIds: string[]): Promise<Set<string>>;
}
