import { duplicatesBy } from './duplicates.js';

/** Where a column goes: before or after another column, or (neither) at the end. */
export interface ColumnPosition {
  before_column_id?: string | undefined;
  after_column_id?: string | undefined;
}

/**
 * `order` (every column id, private ones included) with `id` placed at `position`; `id` is
 * taken out of its old place first. The target must be in `order` (checked by the caller);
 * a column placed relative to itself keeps its place.
 */
export function placeColumn(order: readonly string[], id: string, position: ColumnPosition): string[] {
  const target = position.before_column_id ?? position.after_column_id;
  if (target === id) return [...order];
  const rest = order.filter((c) => c !== id);
  if (target === undefined) return [...rest, id];
  const at = rest.indexOf(target) + (position.after_column_id !== undefined ? 1 : 0);
  return [...rest.slice(0, at), id, ...rest.slice(at)];
}

export type ReorderProblem = { duplicates: string[] } | { unknown_ids: string[] } | { missing_ids: string[] };

/** Why `given` is not a permutation of the public columns (the first kind of fault found), or undefined. */
export function reorderProblem(publicIds: readonly string[], given: readonly string[]): ReorderProblem | undefined {
  // Listed in the order their first repeat occurs.
  const duplicates = duplicatesBy(given, (id) => id).sort((x, y) => x.indexes[1]! - y.indexes[1]!);
  if (duplicates.length) return { duplicates: duplicates.map((d) => d.key) };
  const seen = new Set(given);
  const known = new Set(publicIds);
  const unknown = given.filter((id) => !known.has(id));
  if (unknown.length) return { unknown_ids: unknown };
  const missing = publicIds.filter((id) => !seen.has(id));
  if (missing.length) return { missing_ids: missing };
  return undefined;
}

/**
 * The full order after a reorder of the public columns: the public slots take `publicOrder` in
 * turn, and every private column stays in its slot, so its place relative to its neighbours holds.
 */
export function reorderColumns(order: readonly string[], isPrivate: (id: string) => boolean, publicOrder: readonly string[]): string[] {
  let next = 0;
  return order.map((id) => (isPrivate(id) ? id : publicOrder[next++]!));
}
