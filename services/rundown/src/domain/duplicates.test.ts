import { describe, expect, it } from 'vitest';
import { duplicatesBy } from './duplicates.js';

describe('duplicatesBy', () => {
  it('reports each repeated key once, with all its indexes, in first-occurrence order', () => {
    const items = [{ id: 'b' }, { id: 'a' }, {}, { id: 'b' }, { id: 'a' }, { id: 'c' }, { id: 'b' }];
    expect(duplicatesBy(items, (i) => i.id)).toEqual([
      { key: 'b', indexes: [0, 3, 6] },
      { key: 'a', indexes: [1, 4] },
    ]);
  });

  it('ignores items without a key and finds nothing in a batch of distinct keys', () => {
    expect(duplicatesBy([{}, {}, { id: 'x' }], (i: { id?: string }) => i.id)).toEqual([]);
  });
});
