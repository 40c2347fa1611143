import sanitizeHtml from 'sanitize-html';
import { textToHtml } from '@rundown/shared/cell-text';

/**
 * Cell content rules (docs/api-decisions.md#records). Plain text is stored escaped inside `<p>` (newlines as `<br>`);
 * HTML goes through an allow-list sanitizer (sanitize-html: tags, attributes and URL schemes are
 * allow-listed, everything else is dropped, script-bearing elements with their contents) and the
 * cell's `content` becomes the text of what survived.
 */
export interface CellContent {
  content: string;
  content_html: string;
}

/** Colours only: `#rgb`, `#rrggbb`, `rgb()`/`rgba()` with plain numbers, or a colour keyword. */
const colourValue = /^(?:#[0-9a-f]{3}|#[0-9a-f]{6}|rgba?\(\s*\d{1,3}%?\s*(?:,\s*\d{1,3}%?\s*){2}(?:,\s*(?:0|1|0?\.\d+)\s*)?\)|[a-z]{3,20})$/i;
const colourProperties = new Set(['color', 'background-color']);

/**
 * The `style` attribute reduced to its colour declarations, in canonical form (`color:#f00`).
 * Anything else (url(), expression(), escapes, comments, other properties) is dropped whole:
 * a declaration is kept only if it matches the strict colour grammar above.
 */
export function colourStyle(style: string): string {
  const kept: string[] = [];
  for (const declaration of style.split(';')) {
    const colon = declaration.indexOf(':');
    if (colon < 0) continue;
    const property = declaration.slice(0, colon).trim().toLowerCase();
    const value = declaration.slice(colon + 1).trim();
    if (colourProperties.has(property) && colourValue.test(value)) kept.push(`${property}:${value}`);
  }
  return kept.join(';');
}

const styledTags = ['p', 'div', 'span', 'b', 'strong', 'i', 'em', 'u', 's', 'strike', 'del', 'ins', 'mark', 'sub', 'sup', 'small', 'code', 'pre', 'blockquote', 'ul', 'ol', 'li', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6'];

/** Elements that keep only their own attributes (no `style`). */
const unstyled = new Set(['a', 'rs-mention', 'rs-variable']);

/** Runs on every element before the allow-list: `style` reduced to its colours, or removed. */
const keepColoursOnly: sanitizeHtml.Transformer = (tagName, attribs) => {
  if (attribs.style === undefined) return { tagName, attribs };
  const { style, ...rest } = attribs;
  const colours = unstyled.has(tagName) ? '' : colourStyle(style);
  return { tagName, attribs: colours ? { ...rest, style: colours } : rest };
};

export const sanitizerOptions: sanitizeHtml.IOptions = {
  allowedTags: [...styledTags, 'br', 'hr', 'a', 'rs-mention', 'rs-variable'],
  // `style` on every allowed element, except that `keepColoursOnly` removes it from links and
  // references (which keep only their own attribute). One wildcard entry rather than one per tag:
  // sanitize-html compiles a pattern per entry on every call.
  allowedAttributes: {
    '*': ['style'],
    a: ['href', 'title'],
    'rs-mention': ['data-id'],
    'rs-variable': ['data-key'],
  },
  // The style attribute is reduced by `keepColoursOnly` (a strict grammar) instead of a CSS parser.
  parseStyleAttributes: false,
  transformTags: { '*': keepColoursOnly },
  // Links only to the web, mail and phone; no javascript:, vbscript:, data:, protocol-relative URLs.
  allowedSchemes: ['http', 'https', 'mailto', 'tel'],
  allowedSchemesByTag: {},
  allowedSchemesAppliedToAttributes: ['href'],
  allowProtocolRelative: false,
  disallowedTagsMode: 'discard',
  // Dropped with everything inside them (not just the tag): script, style and embedding vectors.
  nonTextTags: ['script', 'style', 'textarea', 'option', 'noscript', 'iframe', 'object', 'embed', 'svg', 'math', 'template', 'title', 'xmp', 'noembed', 'noframes', 'select', 'head', 'frameset', 'applet', 'plaintext'],
  enforceHtmlBoundary: false,
};

/** Input with none of these is text to the sanitizer: it would answer it unchanged (trimmed). */
const markupOrEscapes = /[<>&]/;

export function sanitize(html: string): string {
  // No tag, entity or character the sanitizer escapes: its output would be the input itself, so
  // the parse is skipped (content.test.ts checks the two agree on generated text).
  if (!markupOrEscapes.test(html)) return html.trim();
  const clean = sanitizeHtml(html, sanitizerOptions);
  // HTML void elements as HTML writes them (`<br>`, as plain-text cells store them), not XHTML's `<br />`.
  return (clean.includes(' />') ? clean.replace(/<(br|hr)((?: [a-z-]+="[^"]*")*) \/>/g, '<$1$2>') : clean).trim();
}

/** Tags after which the text of the cell continues on a new line. */
const lineBreaking = new Set(['p', 'div', 'br', 'li', 'ul', 'ol', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'blockquote', 'pre', 'hr']);

/** The only entities the sanitizer writes (it decodes its input and re-escapes just these). */
const writtenEntities: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"' };

/** A run of sanitizer-written text, its entities decoded. */
const decodeWritten = (run: string) => (run.includes('&') ? run.replace(/&(?:amp|lt|gt|quot);/g, (entity) => writtenEntities[entity]!) : run);

/** A tag name's characters after its first letter (`[a-z0-9-]`). */
const isNameChar = (code: number) => (code >= 97 && code <= 122) || (code >= 48 && code <= 57) || code === 45;

/**
 * The text of sanitized HTML: its text with entities decoded, a line break between blocks and at
 * `<br>`. Runs on the sanitizer's output only, never on input: that output is regular (allow-listed
 * tags, every attribute value quoted with `<`, `>`, `&` and `"` escaped, text escaped the same way,
 * no comments), so every `<` opens a tag that ends at the next `>`, and a scan from one to the next
 * reads it exactly as an HTML parser would (content.test.ts checks the two agree), at a fraction of
 * the cost of a second parse (and of a tokenizing pattern's match objects, which a bulk's 500 cells
 * profiled as a tenth of sanitizing).
 */
export function htmlText(html: string): string {
  let text = '';
  for (let at = 0; at < html.length; ) {
    const open = html.indexOf('<', at);
    if (open < 0) {
      text += decodeWritten(html.slice(at));
      break;
    }
    if (open > at) text += decodeWritten(html.slice(at, open));
    const close = html.indexOf('>', open);
    if (close < 0) break;
    let end = html.charCodeAt(open + 1) === 47 ? open + 2 : open + 1;
    const start = end;
    while (end < close && isNameChar(html.charCodeAt(end))) end++;
    if (lineBreaking.has(html.slice(start, end)) && text !== '' && !text.endsWith('\n')) text += '\n';
    at = close + 1;
  }
  return text.replace(/[ \t]*\n[ \t]*/g, '\n').trim();
}

/** Plain text as stored: escaped, newlines as `<br>`, wrapped in one `<p>` (one definition, shared with the import). */
export { textToHtml };

export const emptyContent = (): CellContent => ({ content: '', content_html: '' });

/** The stored form of a plain-text write; the empty string clears the cell. */
export function fromText(text: string): CellContent {
  return text === '' ? emptyContent() : { content: text, content_html: textToHtml(text) };
}

/** The stored form of an HTML write; HTML that sanitizes to nothing clears the cell. */
export function fromHtml(html: string): CellContent {
  const clean = sanitize(html);
  return clean === '' ? emptyContent() : { content: htmlText(clean), content_html: clean };
}
