/**
 * What the address asks of the page: the token (fragment only, so it never reaches a server log or a
 * Referer) and the display options a show caller sets per screen, in the fragment or the query
 * (`/view/<id>?show=countdown#token=...`; the fragment wins where both name an option).
 */

/** The parts of the screen `show=` and `hide=` name. */
export const PARTS = ['title', 'subtitle', 'countdown', 'progress', 'next', 'message', 'clock', 'over-under', 'state'] as const;
export type Part = (typeof PARTS)[number];

export type Mirror = 'none' | 'horizontal' | 'vertical' | 'both';

export interface ViewerOptions {
  /** The v1 token from `#token=`; null when absent. */
  token: string | null;
  /** A token was put in the query, where the page refuses it (it would reach the server's logs). */
  tokenInQuery: boolean;
  /** The parts shown (every part unless `show=` or `hide=` says otherwise). */
  parts: ReadonlySet<Part>;
  theme: 'dark' | 'light';
  /** Mirrored for a teleprompter glass (horizontal) or a screen mounted upside down (vertical). */
  mirror: Mirror;
  /** 12- or 24-hour clock; null: the rundown's `tod_display_format`, else the browser's locale. */
  clock: '12h' | '24h' | null;
  /** What the address asked that the page could not honour (shown in the console). */
  warnings: string[];
}

const MIRRORS: Record<string, Mirror> = {
  '': 'horizontal',
  '1': 'horizontal',
  true: 'horizontal',
  yes: 'horizontal',
  h: 'horizontal',
  horizontal: 'horizontal',
  v: 'vertical',
  vertical: 'vertical',
  hv: 'both',
  both: 'both',
  '0': 'none',
  false: 'none',
  no: 'none',
  none: 'none',
};

/** `search` and `hash` as `location` gives them (with or without their leading `?` / `#`). */
export function parseOptions(search: string, hash: string): ViewerOptions {
  const query = new URLSearchParams(search.replace(/^\?/, ''));
  const fragment = new URLSearchParams(hash.replace(/^#/, ''));
  const warnings: string[] = [];
  const get = (name: string): string | null => fragment.get(name) ?? query.get(name);

  const partsOf = (name: string): Part[] | null => {
    const value = get(name);
    if (value === null) return null;
    const names = value.split(',').map((n) => n.trim().toLowerCase()).filter(Boolean);
    const known = names.filter((n): n is Part => (PARTS as readonly string[]).includes(n));
    for (const n of names) if (!known.includes(n as Part)) warnings.push(`${name}: unknown part "${n}" (known: ${PARTS.join(', ')})`);
    return known;
  };
  const shown = partsOf('show');
  const hidden = new Set(partsOf('hide') ?? []);
  const parts = new Set((shown ?? PARTS).filter((p) => !hidden.has(p)));

  const theme = get('theme');
  if (theme !== null && theme !== 'dark' && theme !== 'light') warnings.push(`theme: "${theme}" is neither dark nor light`);

  const mirrorValue = get('mirror');
  const mirror = mirrorValue === null ? 'none' : MIRRORS[mirrorValue.toLowerCase()];
  if (mirror === undefined) warnings.push(`mirror: "${mirrorValue}" is none of 1, horizontal, vertical, both, 0`);

  const clock = get('clock');
  if (clock !== null && clock !== '12h' && clock !== '24h') warnings.push(`clock: "${clock}" is neither 12h nor 24h`);

  const tokenInQuery = query.has('token');
  if (tokenInQuery) warnings.push('token: the query is no place for a token (servers log it); put it in the fragment: #token=...');

  return {
    token: fragment.get('token') || null,
    tokenInQuery,
    parts,
    theme: theme === 'light' ? 'light' : 'dark',
    mirror: mirror ?? 'none',
    clock: clock === '12h' || clock === '24h' ? clock : null,
    warnings,
  };
}
