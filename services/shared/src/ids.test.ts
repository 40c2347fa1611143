import { describe, expect, it } from 'vitest';
import { newId, newRequestId, randomToken } from './ids.js';

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

describe('randomToken', () => {
  it('is 16 base64url characters (newId prefixes it), and never repeats across pool refills', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 1_000; i++) {
      const token = randomToken();
      expect(token).toMatch(/^[A-Za-z0-9_-]{16}$/);
      seen.add(token);
    }
    expect(seen.size).toBe(1_000);
    expect(newId('cue')).toMatch(/^cue_[A-Za-z0-9_-]{16}$/);
  });
});
