import { describe, expect, it } from 'vitest';
import { nestedDeeperThan } from './body.js';

const nested = (depth: number, open = '[', close = ']') => JSON.parse(open.repeat(depth) + close.repeat(depth)) as unknown;

describe('nestedDeeperThan', () => {
  it('counts arrays and objects, not scalars', () => {
    expect(nestedDeeperThan(1, 0)).toBe(false);
    expect(nestedDeeperThan('x', 0)).toBe(false);
    expect(nestedDeeperThan([], 0)).toBe(true);
    expect(nestedDeeperThan([], 1)).toBe(false);
    expect(nestedDeeperThan({ a: [{ b: 1 }] }, 3)).toBe(false);
    expect(nestedDeeperThan({ a: [{ b: 1 }] }, 2)).toBe(true);
  });

  it('answers at the limit and just past it', () => {
    expect(nestedDeeperThan(nested(64), 64)).toBe(false);
    expect(nestedDeeperThan(nested(65), 64)).toBe(true);
  });

  it('walks any depth without recursion (the fuzzed 2,400-level array and far beyond)', () => {
    expect(nestedDeeperThan(nested(2_400), 64)).toBe(true);
    expect(nestedDeeperThan(nested(200_000), 64)).toBe(true);
    let deepObject: unknown = 1;
    for (let i = 0; i < 100_000; i++) deepObject = { a: deepObject };
    expect(nestedDeeperThan(deepObject, 64)).toBe(true);
  });

  it('finds a deep branch beside shallow ones', () => {
    expect(nestedDeeperThan({ shallow: [1, 2, 3], deep: nested(70), other: {} }, 64)).toBe(true);
  });
});
