import { describe, expect, it } from 'vitest';
import { lengthIssues, textLength, withinChars } from './limits.js';

describe('text length (code points, as JSON Schema maxLength counts)', () => {
  it('counts an astral character (emoji) as one, where JavaScript counts two units', () => {
    expect('🎬'.length).toBe(2);
    expect(textLength('🎬')).toBe(1);
    expect(textLength('a🎬b')).toBe(3);
    expect(textLength('')).toBe(0);
    expect(textLength('é')).toBe(1);
  });

  it('accepts a text of at most max code points, also when its UTF-16 length is over', () => {
    expect(withinChars('🎬'.repeat(3), 3)).toBe(true);
    expect(withinChars('🎬'.repeat(4), 3)).toBe(false);
    expect(withinChars('abc', 3)).toBe(true);
    expect(withinChars('abcd', 3)).toBe(false);
  });

  it('names each field over its cap, and only those', () => {
    const caps = { title: 3, subtitle: 5 };
    expect(lengthIssues({ title: '🎬🎬🎬', subtitle: 'abcdef', other: 'x'.repeat(99) }, caps, ['cues', 2])).toEqual([
      { path: ['cues', 2, 'subtitle'], message: 'At most 5 characters.', code: 'too_big' },
    ]);
    expect(lengthIssues({ title: 'abcd' }, caps)).toEqual([{ path: ['title'], message: 'At most 3 characters.', code: 'too_big' }]);
    expect(lengthIssues({}, caps)).toEqual([]);
  });
});
