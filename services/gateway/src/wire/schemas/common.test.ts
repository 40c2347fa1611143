import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { limits } from '@rundown/shared/core';
import { maxChars } from './common.js';
import { cueFields } from './cues.js';

describe('maxChars (lengths in code points, as maxLength and the services count them)', () => {
  const title = cueFields.title;

  it('accepts astral characters up to the cap counted as one each', () => {
    expect(title.safeParse('🎬'.repeat(limits.cueTitleChars)).success).toBe(true);
  });

  it('refuses one over the cap exactly as zod’s own max does', () => {
    const own = z.string().max(limits.cueTitleChars).safeParse('x'.repeat(limits.cueTitleChars + 1));
    const ours = title.safeParse('x'.repeat(limits.cueTitleChars + 1));
    expect(ours.success).toBe(false);
    expect(ours.error?.issues.map(({ code, message, path }) => ({ code, message, path }))).toEqual(own.error?.issues.map(({ code, message, path }) => ({ code, message, path })));
    expect(title.safeParse('🎬'.repeat(limits.cueTitleChars + 1)).success).toBe(false);
  });

  it('documents the cap as maxLength', () => {
    expect(z.toJSONSchema(maxChars(z.string(), 7))).toMatchObject({ type: 'string', maxLength: 7 });
  });
});
