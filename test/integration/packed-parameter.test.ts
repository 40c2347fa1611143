import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { packParameter } from '@rundown/shared';

/**
 * packParameter against real PostgreSQL: each value cut back out of the one binary parameter is
 * exactly what the value sent alone would be (a text parameter, a bytea parameter).
 */
let client: pg.Client;

beforeAll(async () => {
  client = new pg.Client({ connectionString: inject('databaseUrl') });
  await client.connect();
});

afterAll(async () => {
  await client.end();
});

const texts = (values: string[]) => {
  const packed = packParameter(values);
  return client.query<{ value: string }>(
    `SELECT convert_from(substring($1::bytea FROM u.start FOR u.length), 'UTF8') AS value
       FROM unnest($2::int[], $3::int[]) WITH ORDINALITY AS u(start, length, ord) ORDER BY u.ord`,
    [packed.bytes, packed.starts, packed.lengths],
  );
};

describe('packParameter', () => {
  it('answers every text as a text parameter of its own would be, multi-byte and odd ones included', async () => {
    const values = [
      '',
      'plain',
      '<p>quotes " and \' and \\ backslashes, {braces}, commas, NULL</p>',
      'é ü ß ‘curly’ — ∑ 日本語',
      'emoji 🎬🎤 (surrogate pairs)',
      'a lone surrogate \ud83c here',
      '\ud800',
      'x'.repeat(100_000),
      '🎬'.repeat(30_000),
    ];
    const { rows } = await texts(values);
    const alone: string[] = [];
    for (const value of values) alone.push((await client.query<{ value: string }>('SELECT $1::text AS value', [value])).rows[0]!.value);
    expect(rows.map((r) => r.value)).toEqual(alone);
    // What a text parameter makes of a lone surrogate (U+FFFD), and nothing else changed.
    expect(alone[5]).toBe('a lone surrogate \ufffd here');
    expect(alone.filter((v, i) => v !== values[i])).toEqual([alone[5], alone[6]]);
  });

  it('packs a batch past its worst-case allocation bound exactly (measured first)', async () => {
    // 2 x 800,000 characters: a worst case of 4.8 MB, over the bound, so the texts are measured.
    const values = ['é'.repeat(800_000), `${'x'.repeat(799_999)}🎬`];
    const packed = packParameter(values);
    expect(packed.bytes.length).toBe(Buffer.byteLength(values[0]!) + Buffer.byteLength(values[1]!));
    expect(packed.bytes.buffer.byteLength).toBeLessThan(4 * 1024 * 1024);
    const { rows } = await texts(values);
    expect(rows.map((r) => r.value)).toEqual(values);
  });

  it('keeps many values apart, in order', async () => {
    const values = Array.from({ length: 1_000 }, (_, i) => `<p>cell ${i} ${'é'.repeat(i % 13)}</p>`);
    const { rows } = await texts(values);
    expect(rows.map((r) => r.value)).toEqual(values);
  });

  it('answers byte strings byte for byte, and mixes them with texts', async () => {
    const bytes = [randomBytes(0), randomBytes(1), Buffer.from([0, 255, 0]), randomBytes(70_000)];
    const packed = packParameter([bytes[0]!, 'text between', bytes[1]!, bytes[2]!, bytes[3]!]);
    const { rows } = await client.query<{ value: Buffer }>(
      `SELECT substring($1::bytea FROM u.start FOR u.length) AS value
         FROM unnest($2::int[], $3::int[]) WITH ORDINALITY AS u(start, length, ord) ORDER BY u.ord`,
      [packed.bytes, packed.starts, packed.lengths],
    );
    expect(rows.map((r) => r.value)).toEqual([bytes[0], Buffer.from('text between'), bytes[1], bytes[2], bytes[3]]);
    expect(packed.bytes.length).toBe(bytes.reduce((n, b) => n + b.length, 0) + 'text between'.length);
  });
});
