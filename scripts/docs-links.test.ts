import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Every relative link of the documentation names a file that exists and, where it names a heading
 * (`page.md#heading`), a heading that is there: a moved, renamed or deleted file breaks this test
 * rather than the reader. The documentation is README.md, docs/ and every README under services/.
 */
const root = resolve(import.meta.dirname, '..');

function markdownUnder(dir: string, only?: (name: string) => boolean): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' || entry.name === 'dist' ? [] : markdownUnder(path, only);
    return entry.name.endsWith('.md') && (!only || only(entry.name)) ? [path] : [];
  });
}

const documents = [
  join(root, 'README.md'),
  ...markdownUnder(join(root, 'docs')),
  ...markdownUnder(join(root, 'services'), (name) => name === 'README.md'),
];

/** The text a reader sees as prose: fenced blocks and inline code are examples, not links. */
function prose(markdown: string): string {
  return withoutFences(markdown).replace(/`[^`\n]*`/g, '');
}

/** Fenced blocks blanked, keeping their lines so that line numbers still match the file. */
function withoutFences(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, (block) => block.replace(/[^\n]/g, ''));
}

/** `[text](target)` and `[text](target "title")` links, with the line each is on. */
function linksOf(markdown: string): { target: string; line: number }[] {
  const links: { target: string; line: number }[] = [];
  prose(markdown)
    .split('\n')
    .forEach((text, index) => {
      for (const match of text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ target: match[1]!, line: index + 1 });
    });
  return links;
}

/** The anchors GitHub gives a document's headings (lower case, punctuation dropped, spaces to hyphens, repeats numbered), and explicit `id`s. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const [, heading] of withoutFences(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const text = heading!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/<[^>]+>/g, '');
    const slug = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  for (const [, id] of markdown.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(id!);
  return anchors;
}

function brokenLinks(file: string): string[] {
  const markdown = readFileSync(file, 'utf8');
  const broken: string[] = [];
  for (const { target, line } of linksOf(markdown)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto: and the like: not ours to check here
    const [pathPart = '', fragment] = target.split('#', 2);
    const path = decodeURIComponent(pathPart.split('?')[0]!);
    const resolved = path === '' ? file : resolve(dirname(file), path);
    const where = `${relative(root, file)}:${line} → ${target}`;
    if (!resolved.startsWith(root)) {
      broken.push(`${where} (outside the repository)`);
      continue;
    }
    if (!existsSync(resolved)) {
      broken.push(`${where} (no such file)`);
      continue;
    }
    if (fragment && resolved.endsWith('.md') && statSync(resolved).isFile() && !anchorsOf(readFileSync(resolved, 'utf8')).has(fragment)) {
      broken.push(`${where} (no such heading)`);
    }
  }
  return broken;
}

describe('documentation links', () => {
  it('reads the README, docs/ and a README per service', () => {
    const names = documents.map((file) => relative(root, file));
    expect(names).toContain('README.md');
    expect(names.filter((name) => name.startsWith('docs/')).length).toBeGreaterThan(5);
    for (const service of readdirSync(join(root, 'services'))) expect(names).toContain(`services/${service}/README.md`);
  });

  it('resolves every relative link to a file and every heading it names', () => {
    expect(documents.flatMap(brokenLinks)).toEqual([]);
  });

  it('finds links and anchors as GitHub renders them', () => {
    const page = '# Fault tests: `npm run chaos`\n## Libraries, and why\n## Libraries, and why\n<a id="v0"></a>\n```sh\n[not](a-link.md)\n```\nSee [this](b.md#x "title") and `[nor](this.md)`.';
    expect(linksOf(page)).toEqual([{ target: 'b.md#x', line: 8 }]);
    expect([...anchorsOf(page)]).toEqual(['fault-tests-npm-run-chaos', 'libraries-and-why', 'libraries-and-why-1', 'v0']);
  });
});
