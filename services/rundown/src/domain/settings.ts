/** Rundown settings: defaults, and the RFC 7396 merge a PATCH applies (null resets to the default). */
export interface Settings {
  cue_numbering: { start_from: number; prefix: string; padding: number };
  tod_display_format: '12h' | '24h' | null;
}

export function defaultSettings(): Settings {
  return { cue_numbering: { start_from: 1, prefix: '', padding: 1 }, tod_display_format: null };
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function isObject(value: unknown): value is Record<string, Json> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Merges `patch` into `target`, where a null member means "back to the default" rather than
 * "remove" (every key always has a value). Shapes were validated at the edge.
 */
export function mergeSettings(target: Settings, patch: Record<string, unknown>): Settings {
  const merge = (current: Json, change: Json, fallback: Json): Json => {
    if (change === null) return fallback;
    if (!isObject(change) || !isObject(current)) return change;
    const out: Record<string, Json> = { ...current };
    const defaults = isObject(fallback) ? fallback : {};
    for (const [key, value] of Object.entries(change)) out[key] = merge(current[key] ?? null, value, defaults[key] ?? null);
    return out;
  };
  return merge(target as unknown as Json, patch as Json, defaultSettings() as unknown as Json) as unknown as Settings;
}
