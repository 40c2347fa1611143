/**
 * Who may see a rundown: the one rule every service applies (rundown, cells, runner, the gateway's
 * status read model). A rundown belongs to one team; a caller sees its own team's rundowns, and a
 * token scoped to one rundown sees that rundown only. Whatever a caller may not see does not exist
 * for it: every refusal is `rundowns.not_found`, never a hint that the rundown is there.
 */

/** A caller as far as seeing rundowns goes (a `CallerContext` is one). */
export interface RundownViewer {
  readonly teamId?: string | undefined;
  /** Set when the caller's token is scoped to one rundown. */
  readonly tokenRundownId?: string | undefined;
}

/** The rundown as far as seeing it goes: its id and its team. */
export interface VisibleRundown {
  readonly id: string;
  readonly teamId: string;
}

/** Whether `caller` may see `rundown`. */
export function canSee(caller: RundownViewer, rundown: VisibleRundown): boolean {
  return couldSee(caller, rundown.id) && caller.teamId === rundown.teamId;
}

/**
 * What `canSee` answers before the rundown is read, from its id alone: false when the caller could
 * see no rundown of that id (no team, or a token scoped to another rundown), so a refusal costs no
 * read. The rest of the rule, the team, is applied to what is read: `canSee` on it, or the read's own
 * filter by the caller's team (the rundown service's queries).
 */
export function couldSee<C extends RundownViewer>(caller: C, rundownId: string): caller is C & { readonly teamId: string } {
  if (!caller.teamId) return false;
  return caller.tokenRundownId === undefined || caller.tokenRundownId === rundownId;
}
