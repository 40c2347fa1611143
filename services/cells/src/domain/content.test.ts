import fc from 'fast-check';
import { Parser, parseDocument } from 'htmlparser2';
import type { ChildNode, Element } from 'domhandler';
import { describe, expect, it } from 'vitest';
import sanitizeHtml from 'sanitize-html';
import { colourStyle, fromHtml, fromText, htmlText, sanitize, sanitizerOptions } from './content.js';
import { xssCorpus } from './fixtures/xss-corpus.js';

/** What docs/api-decisions.md#records allows in stored cell HTML, restated independently of the sanitizer's options. */
const inlineAndBlock = ['p', 'div', 'span', 'b', 'strong', 'i', 'em', 'u', 's', 'strike', 'del', 'ins', 'mark', 'sub', 'sup', 'small', 'code', 'pre', 'blockquote', 'ul', 'ol', 'li', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'br', 'hr'];
const allowedAttributes: Record<string, string[]> = {
  a: ['href', 'title'],
  'rs-mention': ['data-id'],
  'rs-variable': ['data-key'],
  ...Object.fromEntries(inlineAndBlock.map((t) => [t, ['style']])),
};
const safeSchemes = new Set(['http:', 'https:', 'mailto:', 'tel:']);

function elements(nodes: ChildNode[]): Element[] {
  return nodes.flatMap((n) => (n.type === 'tag' || n.type === 'script' || n.type === 'style' ? [n as Element, ...elements((n as Element).children)] : 'children' in n ? elements((n as Element).children) : []));
}

/** Every way the stored HTML could still run script, checked on the parsed result. */
function expectInert(html: string): void {
  const dom = parseDocument(html, { decodeEntities: true });
  for (const el of elements(dom.children)) {
    expect(Object.keys(allowedAttributes), `element <${el.name}> in ${html}`).toContain(el.name);
    for (const [name, value] of Object.entries(el.attribs)) {
      expect(allowedAttributes[el.name], `attribute ${name} on <${el.name}> in ${html}`).toContain(name);
      expect(name).not.toMatch(/^on/i);
      if (name === 'href') {
        // What a browser would resolve: control characters and whitespace are ignored inside a scheme.
        // eslint-disable-next-line no-control-regex -- control characters are exactly what a browser drops here
        const squashed = value.replace(/[\u0000-\u0020\u007f]/g, '').toLowerCase();
        expect(squashed.startsWith('//') || squashed.startsWith('\\\\'), `protocol-relative href in ${html}`).toBe(false);
        const scheme = /^([a-z][a-z0-9+.-]*:)/.exec(squashed)?.[1];
        if (scheme !== undefined) expect(safeSchemes, `href scheme ${scheme} in ${html}`).toContain(scheme);
      }
      if (name === 'style') {
        for (const declaration of value.split(';')) {
          const [property, colour] = declaration.split(':').map((p) => p.trim().toLowerCase());
          expect(['color', 'background-color'], `style ${value} in ${html}`).toContain(property);
          expect(colour).toMatch(/^(#[0-9a-f]{3}|#[0-9a-f]{6}|rgba?\([\d\s,.%]+\)|[a-z]{3,20})$/);
        }
      }
    }
  }
  // The markup alone (text nodes removed: they are escaped and never parsed as markup).
  const markup = html.replace(/>[^<]*</g, '><').replace(/^[^<]*/, '').replace(/[^>]*$/, '');
  expect(html).not.toMatch(/<\s*\/?\s*(script|style|iframe|frame|object|embed|applet|svg|math|img|form|input|button|base|meta|link|template|textarea|select|noscript|xmp|title|plaintext)\b/i);
  expect(markup).not.toMatch(/\s(on[a-z]+|srcdoc|src|formaction|xlink:href|action|background|dynsrc|lowsrc)\s*=/i);
  expect(markup).not.toMatch(/(javascript|vbscript|livescript|data)\s*:/i);
  expect(markup).not.toMatch(/expression\s*\(|url\s*\(|-moz-binding|behavior\s*:/i);
  // Mutation XSS: what the sanitizer emits parses back to itself, so no re-parse can create markup.
  expect(sanitize(html)).toBe(html);
}

describe('the sanitizer against known XSS payloads', () => {
  it('has a corpus of at least 100 payloads', () => {
    expect(xssCorpus.length).toBeGreaterThanOrEqual(100);
    expect(new Set(xssCorpus).size).toBe(xssCorpus.length);
  });

  it.each(xssCorpus.map((payload, i) => [i, payload] as const))('payload %i is inert alone and inside rich text', (_i, payload) => {
    expectInert(sanitize(payload));
    expectInert(sanitize(`<p>Intro <strong>${payload}</strong> outro</p><ul><li>${payload}</li></ul>`));
    const stored = fromHtml(payload);
    expectInert(stored.content_html);
    // `content` is plain text: it is never rendered as HTML, and holds no markup the sanitizer kept.
    expect(stored.content).toBe(htmlText(stored.content_html));
  });
});

describe('legitimate rich text', () => {
  const samples = [
    '<p>Plain paragraph.</p>',
    '<p><strong>bold</strong>, <b>b</b>, <em>italic</em>, <i>i</i>, <u>underline</u> and <s>struck</s></p>',
    '<ul><li>one</li><li>two</li></ul>',
    '<ol><li>first</li><li>second<ul><li>nested</li></ul></li></ol>',
    '<p><a href="https://example.com/path?q=1&amp;r=2#frag">a link</a> and <a href="mailto:desk@example.com">mail</a> and <a href="tel:+4930123">call</a></p>',
    '<p><a href="/relative/path" title="Relative">relative</a></p>',
    '<p><span style="color:#ff0000">red</span> <span style="color:#0f0">green</span> <span style="background-color:yellow">marked</span></p>',
    '<p><span style="color:rgb(10, 20, 30)">rgb</span> <span style="color:#112233;background-color:#ffffff">both</span></p>',
    '<p>Hello <rs-mention data-id="men_123">Anna</rs-mention>, today is <rs-variable data-key="show_date">Monday</rs-variable>.</p>',
    '<h1>Title</h1><h2>Sub</h2><blockquote>quoted</blockquote><pre>  code  </pre><p>line<br>break</p><hr>',
    '<p>Entities: &lt;tag&gt; &amp; caf\u00e9 \u2014 \ud83d\ude00</p>',
    '<p><sub>2</sub> <sup>3</sup> <mark>hi</mark> <code>x</code> <small>s</small> <del>d</del> <ins>i</ins></p>',
    '<div><p>block in div</p></div>',
  ];

  it.each(samples)('survives unchanged: %s', (html) => {
    expect(sanitize(html)).toBe(html);
    expect(fromHtml(html).content_html).toBe(html);
  });

  it('keeps only colour declarations, in canonical form', () => {
    expect(colourStyle('color: #FF0000; font-size: 40px; background-color: blue')).toBe('color:#FF0000;background-color:blue');
    expect(colourStyle('color: red url(x)')).toBe('');
    expect(sanitize('<span style="font-weight:bold">x</span>')).toBe('<span>x</span>');
  });

  it('derives content as the text of the HTML', () => {
    expect(fromHtml('<p>Hello <rs-mention data-id="m">Anna</rs-mention></p><ul><li>one</li><li>two &amp; three</li></ul>').content).toBe('Hello Anna\none\ntwo & three');
    expect(fromHtml('<p>a<br>b</p><p>c</p>').content).toBe('a\nb\nc');
    expect(fromHtml('<script>only script</script>')).toEqual({ content: '', content_html: '' });
  });

  it('answers HTML without markup, entities or escaped characters as the sanitizer does, without parsing it', () => {
    const markupFree = fc.string({ unit: 'binary', maxLength: 200 }).filter((s) => !/[<>&]/.test(s));
    const samples = ['', '  plain  ', 'line\r\nnext\n\tindented', 'quotes " and \' stay', 'nul \u0000 and bom \ufeff', 'emoji 🎬 and é'];
    for (const text of [...samples, ...fc.sample(markupFree, 300)]) {
      expect(sanitize(text), JSON.stringify(text)).toBe(sanitizeHtml(text, sanitizerOptions).trim());
    }
    expect(fromHtml('  Stand by\n  camera 2 ')).toEqual({ content: 'Stand by\ncamera 2', content_html: 'Stand by\n  camera 2' });
    // Under a second of CPU; generous for a loaded machine.
  }, 60_000);

  it('stores plain text escaped in one paragraph', () => {
    expect(fromText('a<b')).toEqual({ content: 'a<b', content_html: '<p>a&lt;b</p>' });
    expect(fromText('x\r\ny\nz & "q" \'r\'')).toEqual({ content: 'x\r\ny\nz & "q" \'r\'', content_html: '<p>x<br>y<br>z &amp; &quot;q&quot; &#39;r&#39;</p>' });
    expect(fromText('<script>alert(1)</script>').content_html).toBe('<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>');
    expect(fromText('')).toEqual({ content: '', content_html: '' });
  });
});

/** The text of HTML as an HTML parser reads it (htmlparser2, decoding entities): what `htmlText` must equal. */
function parsedText(html: string): string {
  const lineBreaking = new Set(['p', 'div', 'br', 'li', 'ul', 'ol', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'blockquote', 'pre', 'hr']);
  let text = '';
  const newline = (name: string) => {
    if (lineBreaking.has(name) && text !== '' && !text.endsWith('\n')) text += '\n';
  };
  const parser = new Parser({ ontext: (chunk) => (text += chunk), onopentag: newline, onclosetag: newline }, { decodeEntities: true });
  parser.end(html);
  return text.replace(/[ \t]*\n[ \t]*/g, '\n').trim();
}

describe('the text of sanitized HTML', () => {
  it('reads the sanitizer output exactly as an HTML parser does (corpus, samples, generated markup)', () => {
    const agree = (input: string) => {
      const clean = sanitize(input);
      expect(htmlText(clean)).toBe(parsedText(clean));
    };
    for (const payload of xssCorpus) {
      agree(payload);
      agree(`<p>ok ${payload} more</p><ul><li>${payload}</li></ul>`);
    }
    const names = ['p', 'b', 'i', 'br', 'hr', 'ul', 'li', 'ol', 'div', 'span', 'a', 'pre', 'h1', 'blockquote', 'rs-mention', 'script', 'style', 'textarea', 'svg', 'table', 'td'];
    const piece = fc.oneof(
      fc.constantFrom(...names).chain((n) => fc.constantFrom(`<${n}>`, `</${n}>`, `<${n} style="color:red" href="https://a.example/?q=1&amp;r=<2>">`, `<${n}/>`)),
      fc.constantFrom('&amp;', '&nbsp;', '&lt;', '&#60;', '&quot;', '<', '>', '"', "'", ' ', '\n', '\t', '<!-- c -->', '<![CDATA[x]]>', '</', 'caf\u00e9'),
      fc.string(),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }), (pieces) => agree(pieces.join(''))),
      { numRuns: 1_000 },
    );
    // A few seconds of CPU; generous for a loaded machine.
  }, 60_000);
});
