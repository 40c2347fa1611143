/** Durations and times as the screen prints them (docs/api-decisions.md#viewer: `M:SS` or `H:MM:SS`). */

const two = (n: number) => String(n).padStart(2, '0');

function clockText(totalSeconds: number): string {
  const hours = Math.floor(totalSeconds / 3600);
  const minutes = Math.floor(totalSeconds / 60) % 60;
  const seconds = totalSeconds % 60;
  return hours > 0 ? `${hours}:${two(minutes)}:${two(seconds)}` : `${minutes}:${two(seconds)}`;
}

/**
 * A countdown: whole seconds rounded up, as the API's `countdown` counts them (59.2 s left is `1:00`,
 * 0.3 s over time is `-0:01`), with a leading `-` once over time.
 */
export function formatCountdown(remainingMs: number): string {
  const seconds = Math.ceil(Math.abs(remainingMs) / 1000);
  return `${remainingMs < 0 ? '-' : ''}${clockText(seconds)}`;
}

/** How long until `formatCountdown` of a remaining time that falls 1 ms per ms prints something else. */
export function countdownChangesIn(remainingMs: number): number {
  // Before the deadline the text changes as the time left reaches a whole second (1:00 at exactly
  // 60 s left); after it, just past one (-0:02 just after 1 s over), hence the extra millisecond.
  if (remainingMs > 0) return remainingMs - (Math.ceil(remainingMs / 1000) - 1) * 1000;
  const over = -remainingMs;
  return Math.ceil(over / 1000) * 1000 - over + 1;
}

/** Over/under (docs/api-decisions.md#timing): to the nearest second, `+` late, `-` early, `0:00` on time. */
export function formatOverUnder(ms: number): string {
  const seconds = Math.round(Math.abs(ms) / 1000);
  if (seconds === 0) return '0:00';
  return `${ms > 0 ? '+' : '-'}${clockText(seconds)}`;
}

/** Whether a colour (`#rgb` or `#rrggbb`) is light: it then needs a dark background to be read. */
export function isLight(color: string): boolean {
  const hex = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i.exec(color)?.[1];
  if (!hex) return true;
  const full = hex.length === 3 ? [...hex].map((c) => c + c).join('') : hex;
  const [r, g, b] = [0, 2, 4].map((i) => parseInt(full.slice(i, i + 2), 16) / 255).map((c) => (c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4)) as [number, number, number];
  // WCAG relative luminance; above ~0.18 black text contrasts better than white.
  return 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.179;
}

/** The time of day in a timezone (the rundown's; the browser's when null or unknown). */
export function clockFormatter(timeZone: string | null, cycle: '12h' | '24h' | null): Intl.DateTimeFormat {
  const options: Intl.DateTimeFormatOptions = { hour: 'numeric', minute: '2-digit', second: '2-digit' };
  if (cycle) options.hourCycle = cycle === '12h' ? 'h12' : 'h23';
  if (cycle === '24h') options.hour = '2-digit';
  try {
    return new Intl.DateTimeFormat(undefined, { ...options, ...(timeZone ? { timeZone } : {}) });
  } catch {
    // An IANA name this browser does not know: its own timezone rather than no clock.
    return new Intl.DateTimeFormat(undefined, options);
  }
}
