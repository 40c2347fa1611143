import { AppError } from '@rundown/shared';
import { duplicatesBy } from './duplicates.js';
import type { CueTreeNode } from './model.js';
import type { CueType } from './model.js';

/**
 * The cue order of a rundown as a two-level tree (groups only at root, their children cues or
 * headings), and the rules on it: placing a cue, validating a reorder, what plays and for how long.
 * Pure: no I/O; the domain loads the tree, applies these and saves the result.
 */


/** docs/api-decisions.md#endpoints position descriptor; `group: null` is the root level. */
export type Position =
  | { kind: 'before' | 'after'; cueId: string }
  | { kind: 'start' | 'end'; group: string | null };

export interface DisplayRow {
  id: string;
  parent_id: string | null;
}

export interface ReorderItem {
  id: string;
  parent_id: string | null;
}

export class CueTree {
  private constructor(
    private readonly root: string[],
    private readonly children: Map<string, string[]>,
    private readonly parents: Map<string, string | null>,
  ) {}

  static from(nodes: CueTreeNode[]): CueTree {
    const tree = new CueTree([], new Map(), new Map());
    for (const node of nodes) {
      tree.root.push(node.id);
      tree.parents.set(node.id, null);
      if (node.children) {
        tree.children.set(
          node.id,
          node.children.map((c) => c.id),
        );
        for (const child of node.children) tree.parents.set(child.id, node.id);
      }
    }
    return tree;
  }

  /**
   * The tree a reorder body describes, or `cues.invalid_reorder` listing every kind of fault.
   * Children follow their group in the order they appear in the body.
   */
  static fromReorder(items: ReorderItem[], types: ReadonlyMap<string, CueType>): CueTree {
    const duplicates = duplicatesBy(items, (item) => item.id).map((d) => d.key);
    const given = new Set(items.map((item) => item.id));
    const unknownIds = [...given].filter((id) => !types.has(id));
    const missingIds = [...types.keys()].filter((id) => !given.has(id));
    const invalidParents: ReorderItem[] = [];
    const nestedGroups: string[] = [];
    for (const item of items) {
      if (item.parent_id === null) continue;
      if (types.get(item.id) === 'group') nestedGroups.push(item.id);
      else if (types.get(item.parent_id) !== 'group' || item.parent_id === item.id) invalidParents.push(item);
    }
    const faults = {
      duplicates,
      unknown_ids: unknownIds,
      missing_ids: missingIds,
      invalid_parents: invalidParents,
      nested_groups: [...new Set(nestedGroups)],
    };
    const present = Object.entries(faults).filter(([, list]) => list.length);
    if (present.length) {
      throw new AppError('cues.invalid_reorder', {
        detail: `The reorder body is not a valid permutation: ${present.map(([kind]) => kind).join(', ')}.`,
        details: Object.fromEntries(present),
      });
    }
    const tree = new CueTree([], new Map(), new Map());
    for (const item of items) {
      tree.parents.set(item.id, item.parent_id);
      if (item.parent_id === null) tree.root.push(item.id);
      else tree.childList(item.parent_id).push(item.id);
    }
    return tree;
  }

  get size(): number {
    return this.parents.size;
  }

  has(id: string): boolean {
    return this.parents.has(id);
  }

  parentOf(id: string): string | null {
    return this.parents.get(id) ?? null;
  }

  childrenOf(id: string): string[] {
    return [...(this.children.get(id) ?? [])];
  }

  /** Display order: each root entry, then its children. */
  displayOrder(): DisplayRow[] {
    return this.root.flatMap((id) => [
      { id, parent_id: null },
      ...(this.children.get(id) ?? []).map((child) => ({ id: child, parent_id: id })),
    ]);
  }

  /** The stored form: `children` only on non-empty groups. */
  toNodes(): CueTreeNode[] {
    return this.root.map((id) => {
      const kids = this.children.get(id);
      return kids?.length ? { id, children: kids.map((child) => ({ id: child })) } : { id };
    });
  }

  /** Takes a cue out of the tree (a group only when empty: the domain refuses the rest). */
  remove(id: string): void {
    this.detach(id);
    this.children.delete(id);
  }

  /** Takes a cue out of its list; a group keeps its children, so it moves with them. */
  private detach(id: string): void {
    const parent = this.parents.get(id);
    if (parent === undefined) return;
    const list = parent === null ? this.root : this.childList(parent);
    list.splice(list.indexOf(id), 1);
    this.parents.delete(id);
  }

  /**
   * Puts `id` (new or already in the tree) where `position` says. `type` is the cue's type after
   * the write; `typeOf` answers for the other cues. Errors: `cues.position_target_not_found` for a
   * missing target, `cues.invalid_position` for a group into a group or a target group that is not one.
   */
  place(id: string, type: CueType, position: Position, typeOf: (id: string) => CueType | undefined): void {
    let list: string[];
    let index: number;
    let parent: string | null;
    if ('cueId' in position) {
      const target = position.cueId;
      if (!this.has(target)) throw new AppError('cues.position_target_not_found', { details: { cue_id: target } });
      if (target === id) throw new AppError('cues.invalid_position', { detail: 'A cue cannot be placed relative to itself.' });
      parent = this.parentOf(target);
      // A cue moved next to its own child would end up inside itself.
      if ((parent !== null && type === 'group') || parent === id) throw groupInGroup();
      this.detach(id);
      list = parent === null ? this.root : this.childList(parent);
      index = list.indexOf(target) + (position.kind === 'after' ? 1 : 0);
    } else {
      parent = position.group;
      if (parent !== null) {
        const targetType = typeOf(parent);
        if (!this.has(parent) || targetType === undefined) {
          throw new AppError('cues.position_target_not_found', { details: { cue_id: parent } });
        }
        if (targetType !== 'group') {
          throw new AppError('cues.invalid_position', { detail: `Cue ${parent} is a ${targetType}, not a group.` });
        }
        if (type === 'group') throw groupInGroup();
      }
      this.detach(id);
      list = parent === null ? this.root : this.childList(parent);
      index = position.kind === 'start' ? 0 : list.length;
    }
    list.splice(index, 0, id);
    this.parents.set(id, parent);
  }

  private childList(group: string): string[] {
    let list = this.children.get(group);
    if (!list) {
      list = [];
      this.children.set(group, list);
    }
    return list;
  }
}

function groupInGroup(): AppError {
  return new AppError('cues.invalid_position', { detail: 'Groups exist only at root level; a group cannot go inside a group.' });
}

export interface TimingFacts {
  type: CueType;
  skip: boolean;
  duration_ms: number;
}

/** Whether the runner skips a cue, and why: its own `skip` wins over its group’s. */
export function skippedBy(cue: { skip: boolean }, group: { skip: boolean } | undefined): 'self' | 'group' | null {
  if (cue.skip) return 'self';
  if (group?.skip) return 'group';
  return null;
}

/** The cues the runner plays, in display order: type `cue`, skipped neither by itself nor by its group. */
export function playableIds(tree: CueTree, cues: ReadonlyMap<string, TimingFacts>): string[] {
  return tree
    .displayOrder()
    .filter(({ id, parent_id }) => {
      const cue = cues.get(id);
      return cue?.type === 'cue' && skippedBy(cue, parent_id === null ? undefined : cues.get(parent_id)) === null;
    })
    .map((row) => row.id);
}

/** What `end_time - start_time` of the rundown is: the sum of the playable cues’ durations. */
export function playableDurationMs(tree: CueTree, cues: ReadonlyMap<string, TimingFacts>): number {
  return playableIds(tree, cues).reduce((sum, id) => sum + (cues.get(id)?.duration_ms ?? 0), 0);
}
