/** Keys that occur more than once in a batch, each with every index it occurs at (first occurrence order). */
export function duplicatesBy<T>(items: readonly T[], keyOf: (item: T) => string | undefined): { key: string; indexes: number[] }[] {
  const seen = new Map<string, number[]>();
  items.forEach((item, index) => {
    const key = keyOf(item);
    if (key === undefined) return;
    const indexes = seen.get(key);
    if (indexes) indexes.push(index);
    else seen.set(key, [index]);
  });
  return [...seen].filter(([, indexes]) => indexes.length > 1).map(([key, indexes]) => ({ key, indexes }));
}
