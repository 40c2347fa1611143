const escapes: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/**
 * Plain cell text as stored (docs/api-decisions.md#records): escaped, newlines as `<br>`, wrapped in one `<p>`. Shared
 * because an import tells a plain-text cell (whose HTML is exactly this) from a rich one by it.
 */
export function textToHtml(text: string): string {
  const escaped = text.replace(/\r\n?/g, '\n').replace(/[&<>"']/g, (c) => escapes[c]!);
  return `<p>${escaped.replace(/\n/g, '<br>')}</p>`;
}
