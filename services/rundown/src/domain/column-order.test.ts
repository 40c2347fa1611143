import { describe, expect, it } from 'vitest';
import { placeColumn, reorderColumns, reorderProblem } from './column-order.js';

describe('placeColumn', () => {
  const order = ['a', 'b', 'c'];

  it('appends without a position', () => {
    expect(placeColumn(order, 'n', {})).toEqual(['a', 'b', 'c', 'n']);
  });

  it('inserts right before or right after the target', () => {
    expect(placeColumn(order, 'n', { before_column_id: 'a' })).toEqual(['n', 'a', 'b', 'c']);
    expect(placeColumn(order, 'n', { before_column_id: 'c' })).toEqual(['a', 'b', 'n', 'c']);
    expect(placeColumn(order, 'n', { after_column_id: 'a' })).toEqual(['a', 'n', 'b', 'c']);
    expect(placeColumn(order, 'n', { after_column_id: 'c' })).toEqual(['a', 'b', 'c', 'n']);
  });

  it('moves an existing column', () => {
    expect(placeColumn(order, 'c', { before_column_id: 'a' })).toEqual(['c', 'a', 'b']);
    expect(placeColumn(order, 'a', { after_column_id: 'c' })).toEqual(['b', 'c', 'a']);
    expect(placeColumn(order, 'a', {})).toEqual(['b', 'c', 'a']);
  });

  it('keeps a column placed relative to itself where it is', () => {
    expect(placeColumn(order, 'b', { before_column_id: 'b' })).toEqual(order);
    expect(placeColumn(order, 'b', { after_column_id: 'b' })).toEqual(order);
  });
});

describe('reorderProblem', () => {
  const pub = ['a', 'b', 'c'];

  it('accepts a permutation', () => {
    expect(reorderProblem(pub, ['c', 'a', 'b'])).toBeUndefined();
    expect(reorderProblem([], [])).toBeUndefined();
  });

  it('reports duplicates first, then unknown ids, then missing ids', () => {
    expect(reorderProblem(pub, ['a', 'a', 'x', 'b', 'b'])).toEqual({ duplicates: ['a', 'b'] });
    expect(reorderProblem(pub, ['a', 'b', 'c', 'x'])).toEqual({ unknown_ids: ['x'] });
    expect(reorderProblem(pub, ['c'])).toEqual({ missing_ids: ['a', 'b'] });
  });
});

describe('reorderColumns', () => {
  it('fills the public slots in the new order and leaves private columns in theirs', () => {
    const isPrivate = (id: string) => id.startsWith('p');
    expect(reorderColumns(['p1', 'a', 'b', 'p2', 'c', 'p3'], isPrivate, ['c', 'a', 'b'])).toEqual(['p1', 'c', 'a', 'p2', 'b', 'p3']);
  });
});
