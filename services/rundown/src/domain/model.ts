import { AppError, type CallerContext } from '@rundown/shared';

/**
 * The rundown context's records: what its repositories store and read and its domain works on.
 * They belong to the domain; repositories and the rest of the domain import them from here, and
 * this module imports nothing of the service's own.
 */

export type CueType = 'cue' | 'heading' | 'group';
export const cueTypes: readonly CueType[] = ['cue', 'heading', 'group'];

export interface CueTreeNode {
  id: string;
  children?: CueTreeNode[];
}

export interface RundownRow {
  id: string;
  team_id: string;
  title: string;
  timezone: string | null;
  start_time: number | null;
  status: RundownStatus;
  settings: Settings;
  cue_tree: CueTreeNode[];
  column_ids: string[];
  /** column_ids less the private columns: what clients see as column_order. */
  public_column_ids: string[];
  playable_duration_ms: number;
  /** Moves with every change to the rundown's playable order (see the OrderVersion migration). */
  order_version: number;
  /** Moves with every write of the row (see the RecordVersion migration): the record read model's version. */
  record_version: number;
  created_at: Date;
  updated_at: Date;
  /** created_at with microseconds, for cursors (a JS Date keeps only ms). */
  created_key: string;
}

export interface ColumnRow {
  id: string;
  rundown_id: string;
  name: string;
  type: 'text' | 'select' | 'image' | 'attachment';
  private: boolean;
  created_at: Date;
  updated_at: Date;
}

export interface MentionRow {
  id: string;
  rundown_id: string;
  name: string;
  color: string;
  description: string;
  created_at: Date;
  updated_at: Date;
}

export type MentionValues = Pick<MentionRow, 'id' | 'name' | 'color' | 'description'>;

export interface OutputMessageRow {
  text: string;
  visible: boolean;
  color: string;
  bold: boolean;
  underline: boolean;
  updated_at: Date;
}

export type OutputMessageValues = Omit<OutputMessageRow, 'updated_at'>;

export interface TextVariableRow {
  key: string;
  value: string;
  created_at: Date;
  updated_at: Date;
}

export interface OutputMessageRecord extends OutputMessageValues {
  /** null until the message is first written. */
  updated_at: Date | null;
}

/** A cue as stored. */
export interface CueRow {
  id: string;
  type: CueType;
  title: string;
  subtitle: string;
  duration_ms: number;
  background_color: string | null;
  start_time: number | null;
  prevent_edits: boolean;
  skip: boolean;
  auto_advance: boolean;
  scheduled: boolean;
  created_at: string;
  updated_at: string;
}

/** A cue as clients read it (docs/api-decisions.md#records): the row plus where it sits and whether it plays. */
export interface CueRecord extends CueRow {
  parent_id: string | null;
  skipped_by: 'self' | 'group' | null;
}

/** Rundown settings (docs/api-decisions.md#records): their shape, defaults, limits and the PATCH merge are the domain's. */
export interface Settings {
  cue_numbering: { start_from: number; prefix: string; padding: number };
  tod_display_format: TodDisplayFormat | null;
}

export const todDisplayFormats = ['12h', '24h'] as const;
export type TodDisplayFormat = (typeof todDisplayFormats)[number];

/** docs/api-decisions.md#records: any status may follow any other; a new rundown is a draft unless told otherwise. */
export const rundownStatuses = ['imported', 'draft', 'awaiting-data', 'approved', 'finalized', 'rejected'] as const;
export type RundownStatus = (typeof rundownStatuses)[number];
export const defaultStatus: RundownStatus = 'draft';

export interface RundownRecord {
  id: string;
  title: string;
  timezone: string | null;
  start_time: number | null;
  end_time: number | null;
  status: RundownStatus;
  settings: Settings;
  cue_order: CueTreeNode[];
  column_order: string[];
  created_at: string;
  updated_at: string;
}

/**
 * A caller's reach: its team, and the one rundown a rundown-scoped token is limited to. Who may see
 * a rundown is the shared `canSee`; this service applies its team half in its queries.
 */
export interface Scope {
  teamId: string;
  tokenRundownId: string | undefined;
}

export function scopeOf(ctx: CallerContext): Scope {
  if (!ctx.teamId) throw new AppError('rundowns.not_found');
  return { teamId: ctx.teamId, tokenRundownId: ctx.tokenRundownId };
}

export function toRecord(row: RundownRow): RundownRecord {
  return {
    id: row.id,
    title: row.title,
    timezone: row.timezone,
    start_time: row.start_time,
    end_time: row.start_time === null ? null : row.start_time + row.playable_duration_ms,
    status: row.status,
    settings: row.settings,
    cue_order: row.cue_tree,
    column_order: row.public_column_ids,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
