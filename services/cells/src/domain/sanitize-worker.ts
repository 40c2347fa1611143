import { fromHtml, type CellContent } from './content.js';

/** A worker thread's task (see html-contents.ts): a chunk of HTML writes, in their stored form. */
export default function sanitizeChunk(htmls: string[]): CellContent[] {
  return htmls.map(fromHtml);
}
