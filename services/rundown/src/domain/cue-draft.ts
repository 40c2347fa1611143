import { AppError, lengthIssues, limits, newId, textLimits } from '@rundown/shared';
import { CueTree, playableDurationMs, skippedBy, type Position, type ReorderItem } from './cue-tree.js';
import type { CueTreeNode, CueType } from './model.js';
import type { CueRecord, CueRow } from './model.js';


/** The writable fields; absent means "leave as is" (or the default, on create). */
export interface CueFields {
  type?: CueType;
  title?: string;
  subtitle?: string;
  duration_ms?: number;
  background_color?: string | null;
  start_time?: number | null;
  skip?: boolean;
  auto_advance?: boolean;
  scheduled?: boolean;
}

export interface CreateCueInput extends CueFields {
  position?: Position;
  /** The id to give the cue (derived from an Idempotency-Key by the gateway); absent: a fresh one. */
  id?: string;
}

export interface PatchCueInput extends CueFields {
  id: string;
  position?: Position;
}

export type BulkItem = { create: CreateCueInput } | { patch: PatchCueInput };

const atEnd: Position = { kind: 'end', group: null };

/**
 * One write's working copy of a rundown's cues: the operations apply the rules to it in memory,
 * then the service persists what changed in a few set-based statements. Every check runs before
 * anything is written, so a failing item leaves nothing behind.
 */
export class CueDraft {
  tree: CueTree;
  private readonly cues = new Map<string, CueRow>();
  readonly created = new Set<string>();
  readonly changed = new Set<string>();
  readonly deleted: string[] = [];
  private readonly originalOrder: string;
  private readonly originalPlacement: Map<string, string>;
  private reordered = false;
  private readonly originalPlayableMs: number;
  /** Each changed cue as it was read (kept on its first change), to tell what changed. */
  private readonly before = new Map<string, CueRow>();

  constructor(
    readonly rundownId: string,
    order: CueTreeNode[],
    rows: CueRow[],
  ) {
    this.tree = CueTree.from(order);
    for (const row of rows) this.cues.set(row.id, row);
    // Compared in the stored form, so a tree read back from jsonb compares equal to itself.
    this.originalOrder = JSON.stringify(this.tree.toNodes());
    this.originalPlacement = placement(this.tree);
    this.originalPlayableMs = this.playableMs();
  }

  /**
   * A new cue. With an id the rundown already has, this is the same request again (the gateway
   * derives the id from the Idempotency-Key: an attempt applied but never answered, then retried):
   * nothing is made, and that cue's id is answered.
   */
  create(input: CreateCueInput, path: (string | number)[] = []): string {
    if (input.id !== undefined && this.cues.has(input.id)) return input.id;
    const id = input.id ?? newId('cue');
    const now = new Date().toISOString();
    const row: CueRow = {
      id,
      type: input.type ?? 'cue',
      title: input.title ?? '',
      subtitle: input.subtitle ?? '',
      duration_ms: input.duration_ms ?? 0,
      background_color: input.background_color ?? null,
      start_time: input.start_time ?? null,
      prevent_edits: false,
      skip: input.skip ?? false,
      auto_advance: input.auto_advance ?? false,
      scheduled: input.scheduled ?? false,
      created_at: now,
      updated_at: now,
    };
    this.tree.place(id, row.type, input.position ?? atEnd, (other) => this.cues.get(other)?.type);
    checkFieldValues(row, path);
    this.cues.set(id, row);
    this.created.add(id);
    return id;
  }

  patch(input: PatchCueInput, path: (string | number)[] = []): string {
    const current = this.editable(input.id);
    const { id, position, ...fields } = input;
    if (!Object.keys(fields).length && !position) throw new AppError('cues.empty_patch');
    const next: CueRow = { ...current, ...definedOnly(fields), updated_at: new Date().toISOString() };
    if (position) this.tree.place(id, next.type, position, (other) => (other === id ? next.type : this.cues.get(other)?.type));
    if (next.type !== current.type) {
      if (next.type === 'group' && this.tree.parentOf(id) !== null) {
        throw new AppError('cues.invalid_type_conversion', {
          detail: 'A cue inside a group cannot become a group: groups exist only at root level.',
          details: { cue_id: id, from_type: current.type, to_type: next.type },
        });
      }
      const children = this.tree.childrenOf(id);
      if (current.type === 'group' && children.length) {
        throw new AppError('cues.group_not_empty', {
          detail: 'A group with children cannot change type; move or delete its children first.',
          details: { cue_id: id, children_ids: children },
        });
      }
    }
    checkFieldValues(next, path);
    this.cues.set(id, next);
    if (!this.created.has(id)) {
      if (!this.before.has(id)) this.before.set(id, current);
      this.changed.add(id);
    }
    return id;
  }

  delete(id: string): void {
    const current = this.editable(id);
    const children = this.tree.childrenOf(id);
    if (current.type === 'group' && children.length) {
      throw new AppError('cues.group_not_empty', {
        detail: 'A group with children cannot be deleted; move or delete its children first.',
        details: { cue_id: id, children_ids: children },
      });
    }
    this.tree.remove(id);
    this.cues.delete(id);
    this.deleted.push(id);
  }

  /** Replaces the whole order; every cue once, groups at root (see CueTree.fromReorder). */
  reorder(items: ReorderItem[]): void {
    const types = new Map([...this.cues].map(([id, row]) => [id, row.type]));
    this.tree = CueTree.fromReorder(items, types);
    this.reordered = true;
  }

  /** After a reorder: the cues whose parent or predecessor it changed (none otherwise). */
  moved(): string[] {
    if (!this.reordered) return [];
    return [...placement(this.tree)].filter(([id, place]) => this.originalPlacement.get(id) !== place).map(([id]) => id);
  }

  apply(items: BulkItem[]): string[] {
    return items.map((item, index) =>
      'create' in item ? this.create(item.create, ['items', index]) : this.patch(item.patch, ['items', index]),
    );
  }

  /** The cue cap (group children included) on the state this write would leave. */
  checkCap(): void {
    if (this.tree.size > limits.cuesPerRundown) {
      throw new AppError('cues.too_many', {
        detail: `A rundown holds at most ${limits.cuesPerRundown} cues, group children included; this write would leave ${this.tree.size}.`,
        details: { limit: limits.cuesPerRundown, received: this.tree.size, unit: 'cues' },
      });
    }
  }

  /** Rows of this draft's cues, in display order: those this write creates and those it changes. */
  pending(): { created: CueRow[]; changed: CueRow[] } {
    const rows = this.tree.displayOrder().map(({ id }) => this.cues.get(id)!);
    return { created: rows.filter((r) => this.created.has(r.id)), changed: rows.filter((r) => this.changed.has(r.id)) };
  }

  /** Takes rows back as stored (database timestamps). */
  adopt(rows: CueRow[]): void {
    for (const row of rows) this.cues.set(row.id, row);
  }

  record(id: string): CueRecord {
    const row = this.cues.get(id);
    if (!row) throw new AppError('cues.not_found', { details: { rundown_id: this.rundownId, cue_id: id } });
    const parent = this.tree.parentOf(id);
    return { ...row, parent_id: parent, skipped_by: skippedBy(row, parent === null ? undefined : this.cues.get(parent)) };
  }

  /** Every cue, in display order. */
  records(): CueRecord[] {
    return this.tree.displayOrder().map(({ id }) => this.record(id));
  }

  playableMs(): number {
    return playableDurationMs(this.tree, this.cues);
  }

  /**
   * Whether the cells service's layout facts change: a cue created or deleted, or one whose type or
   * lock differs from what was read (a title edit or a move changes none of them).
   */
  layoutChanged(): boolean {
    if (this.created.size || this.deleted.length) return true;
    return [...this.changed].some((id) => {
      const [was, now] = [this.before.get(id)!, this.cues.get(id)!];
      return was.type !== now.type || was.prevent_edits !== now.prevent_edits;
    });
  }

  orderChanged(): boolean {
    return JSON.stringify(this.tree.toNodes()) !== this.originalOrder;
  }

  playableChanged(): boolean {
    return this.playableMs() !== this.originalPlayableMs;
  }

  /** A cue that exists and is not locked: the lock holds for every write to the cue (PATCH, bulk, delete). */
  private editable(id: string): CueRow {
    const row = this.cues.get(id);
    if (!row) throw new AppError('cues.not_found', { details: { rundown_id: this.rundownId, cue_id: id } });
    if (row.prevent_edits) {
      throw new AppError('cues.prevent_edits', {
        detail: `Cue ${id} is locked against edits; it can be unlocked only in the rundown screen.`,
        details: { cue_id: id },
      });
    }
    return row;
  }
}

/** Where each cue sits: its parent and the sibling before it. */
function placement(tree: CueTree): Map<string, string> {
  const out = new Map<string, string>();
  let previous = new Map<string | null, string>();
  for (const { id, parent_id } of tree.displayOrder()) {
    out.set(id, `${parent_id ?? ''}/${previous.get(parent_id) ?? ''}`);
    previous = previous.set(parent_id, id);
  }
  return out;
}

function definedOnly(fields: CueFields): Partial<CueRow> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as Partial<CueRow>;
}

/** `scheduled` means "start at start_time", so it needs one (checked on the cue as the write leaves it). */
/** The rules on a cue's values: its text lengths (the limits table's), and a scheduled cue has a start_time. */
function checkFieldValues(row: CueRow, path: (string | number)[]): void {
  const issues = lengthIssues(row, textLimits.cue, path);
  if (issues.length) throw AppError.validation('cues.invalid_payload', issues);
  if (row.scheduled && row.start_time === null) {
    throw AppError.validation('cues.invalid_payload', [
      { path: [...path, 'scheduled'], message: 'A scheduled cue needs a start_time.', code: 'custom' },
    ]);
  }
}
