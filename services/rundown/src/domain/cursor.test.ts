import { describe, expect, it } from 'vitest';
import { CursorCodec } from './cursor.js';

const codec = new CursorCodec('x'.repeat(32));

describe('CursorCodec', () => {
  it('round-trips a position for the same scope', () => {
    const cursor = codec.encode('s1', { t: '2026-01-01T00:00:00.000001', i: 'rd_1' });
    expect(codec.decode('s1', cursor)).toEqual({ t: '2026-01-01T00:00:00.000001', i: 'rd_1' });
  });

  it('refuses a cursor altered, truncated, from another scope or another secret', () => {
    const cursor = codec.encode('s1', { t: 'a', i: 'b' });
    const refused = (value: string, scope = 's1', c = codec) => expect(() => c.decode(scope, value)).toThrow(expect.objectContaining({ code: 'cursor.invalid' }));
    refused(cursor.replace(/^./, (ch) => (ch === 'e' ? 'f' : 'e')));
    refused(cursor.slice(0, -1));
    refused(cursor.split('.')[0]!);
    refused(`${cursor}.x`);
    refused(cursor, 's2');
    refused(cursor, 's1', new CursorCodec('y'.repeat(32)));
  });
});
