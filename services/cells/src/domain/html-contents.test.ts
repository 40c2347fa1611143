import { afterAll, describe, expect, it } from 'vitest';
import { fromHtml } from './content.js';
import { xssCorpus } from './fixtures/xss-corpus.js';
import { PooledHtmlContents, POOLED_FROM } from './html-contents.js';

const pool = new PooledHtmlContents(2);
afterAll(() => pool.close());

/** The corpus, alone and inside rich text, plus plain and empty input: what a bulk may carry. */
const writes = [
  ...xssCorpus,
  ...xssCorpus.map((payload, i) => `<p><strong>Cue ${i}</strong> <span style="color:#d33">stand by</span> ${payload} <a href="https://example.com/${i}">link</a></p>`),
  'plain text & more',
  '',
  '<script>only script</script>',
];

describe('sanitizing across worker threads', () => {
  it('answers exactly what sanitizing in this thread answers, in order (a batch of the XSS corpus)', async () => {
    expect(writes.length).toBeGreaterThanOrEqual(POOLED_FROM);
    expect(await pool.of(writes)).toEqual(writes.map(fromHtml));
  });

  it('answers a small batch (sanitized in this thread) and an empty one alike', async () => {
    const few = writes.slice(0, POOLED_FROM - 1);
    expect(await pool.of(few)).toEqual(few.map(fromHtml));
    expect(await pool.of([])).toEqual([]);
  });

  it('keeps each answer with its request when batches overlap', async () => {
    const batches = [writes, [...writes].reverse(), writes.slice(40, 40 + POOLED_FROM)];
    expect(await Promise.all(batches.map((b) => pool.of(b)))).toEqual(batches.map((b) => b.map(fromHtml)));
  });
});
