import { describe, expect, it } from 'vitest';
import { newRequestId } from './ids.js';

describe('newRequestId', () => {
  it('is req_ and 24 hex digits, and never repeats across pool refills', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 5_000; i++) {
      const id = newRequestId();
      expect(id).toMatch(/^req_[0-9a-f]{24}$/);
      seen.add(id);
    }
    expect(seen.size).toBe(5_000);
  });
});
