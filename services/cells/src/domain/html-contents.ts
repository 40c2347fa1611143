import Tinypool from 'tinypool';
import { fromHtml, type CellContent } from './content.js';

/** The stored form of many HTML writes (`fromHtml` of each, in order). */
export interface HtmlContents {
  of(htmls: string[]): Promise<CellContent[]>;
  close(): Promise<void>;
}

/** Every write sanitized in this thread: single writes, and where no pool is configured. */
export const inThreadContents: HtmlContents = {
  of: (htmls) => Promise.resolve(htmls.map(fromHtml)),
  close: () => Promise.resolve(),
};

/**
 * Below this many HTML writes, sanitizing stays in this thread: handing chunks to workers and
 * back (structured clone both ways, a thread wake-up) costs more than it saves on a few cells.
 */
export const POOLED_FROM = 32;

/** The worker module beside this one, compiled or (see the `.mjs`) from source. */
const workerFile = new URL(import.meta.url.endsWith('.ts') ? './sanitize-worker.source.mjs' : './sanitize-worker.js', import.meta.url);

/**
 * Sanitizing spread over worker threads (tinypool): a batch of at least `POOLED_FROM` HTML writes
 * is cut into one chunk per thread, sanitized in parallel. Sanitizing is most of a cells:bulk's CPU
 * (sanitize-html's parse and rebuild of each cell), and all of it is synchronous: in this thread it
 * would also hold up every other request meanwhile.
 */
export class PooledHtmlContents implements HtmlContents {
  private readonly pool: Tinypool;

  constructor(private readonly threads: number) {
    // Threads start now and stay (min = max): a bulk never waits for a worker to load sanitize-html.
    this.pool = new Tinypool({ filename: workerFile.href, minThreads: threads, maxThreads: threads });
  }

  async of(htmls: string[]): Promise<CellContent[]> {
    if (htmls.length < POOLED_FROM) return inThreadContents.of(htmls);
    const size = Math.ceil(htmls.length / this.threads);
    const chunks: Promise<CellContent[]>[] = [];
    for (let from = 0; from < htmls.length; from += size) chunks.push(this.pool.run(htmls.slice(from, from + size)) as Promise<CellContent[]>);
    return (await Promise.all(chunks)).flat();
  }

  close(): Promise<void> {
    return this.pool.destroy();
  }
}
