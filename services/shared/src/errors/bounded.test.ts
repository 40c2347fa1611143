import { describe, expect, it } from 'vitest';
import { boundDetails, boundText, errorBounds } from './bounded.js';

describe('bounded error text and details', () => {
  it('keeps what fits as it is', () => {
    const details = { cue_id: 'cue_1', children_ids: ['a', 'b'], issues: [{ path: ['columns', 0, 'name'], message: 'duplicate', code: 'custom' }] };
    expect(boundDetails(details)).toEqual(details);
    expect(boundText('Column col_1 not found.')).toBe('Column col_1 not found.');
  });

  it('cuts a long text on a character boundary and says how much was cut', () => {
    const cut = boundText('\u{1F600}'.repeat(errorBounds.detailChars + 5));
    expect(cut).toBe(`${'\u{1F600}'.repeat(errorBounds.detailChars)}…[cut: 5 more characters]`);
  });

  it('cuts strings, arrays, objects and nesting in details, each with a marker', () => {
    const bounded = boundDetails({
      id: 'x'.repeat(100_000),
      indexes: Array.from({ length: 30_000 }, (_, i) => i),
      names: Object.fromEntries(Array.from({ length: 80 }, (_, i) => [`k${i}`, i])),
      deep: [[[[[[[['bottom']]]]]]]],
    });
    expect(bounded.id).toBe(`${'x'.repeat(errorBounds.stringChars)}…[cut: ${100_000 - errorBounds.stringChars} more characters]`);
    expect(bounded.indexes).toHaveLength(errorBounds.arrayItems + 1);
    expect((bounded.indexes as unknown[]).at(-1)).toBe(`…[cut: ${30_000 - errorBounds.arrayItems} more items]`);
    expect(Object.keys(bounded.names as object)).toHaveLength(errorBounds.objectKeys + 1);
    expect(JSON.stringify(bounded.deep)).toContain('…[cut: nested too deep]');
  });

  it('never lets the whole of the details pass its byte bound', () => {
    const wide = { issues: Array.from({ length: 5_000 }, (_, i) => ({ path: ['columns', i, 'name'], message: '\u{1F600}'.repeat(500), code: 'custom' })) };
    const tighter = boundDetails(wide);
    expect(Buffer.byteLength(JSON.stringify(tighter))).toBeLessThanOrEqual(errorBounds.detailsBytes);
    expect((tighter.issues as unknown[]).length).toBeLessThan(errorBounds.arrayItems);
    expect((tighter.issues as unknown[]).at(-1)).toEqual({ path: [], message: expect.stringMatching(/^…\[cut: \d+ more items\]$/), code: 'cut' });
    const wider = Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`${i}`.padStart(200, '\u{1F600}'), i]));
    const bounded = boundDetails(wider);
    expect(Buffer.byteLength(JSON.stringify(bounded))).toBeLessThanOrEqual(errorBounds.detailsBytes);
  });
});
