import { AppError, limits, withinChars, type Issue } from '@rundown/shared';
import { type Settings, type TodDisplayFormat, todDisplayFormats } from './model.js';

/**
 * An RFC 7396 merge patch of the settings: an absent member keeps its value, `null` resets it to
 * its default (every key always has a value), `cue_numbering: null` resets the whole group.
 */
export interface SettingsPatch {
  cue_numbering?: { start_from?: number | null; prefix?: string | null; padding?: number | null } | null;
  tod_display_format?: TodDisplayFormat | null;
}

export const cueNumberingLimits = { start_from: { min: 0, max: limits.cueNumberingStartFromMax }, prefixChars: limits.cueNumberingPrefixChars, padding: limits.cueNumberingPadding };

export function defaultSettings(): Settings {
  return { cue_numbering: { start_from: 1, prefix: '', padding: 1 }, tod_display_format: null };
}

/** Applies the patch (after `checkSettingsPatch`). */
export function mergeSettings(target: Settings, patch: SettingsPatch): Settings {
  const defaults = defaultSettings();
  const numbering = patch.cue_numbering;
  const pick = <T>(change: T | null | undefined, current: T, fallback: T): T => (change === undefined ? current : change === null ? fallback : change);
  return {
    cue_numbering:
      numbering === null
        ? defaults.cue_numbering
        : numbering === undefined
          ? target.cue_numbering
          : {
              start_from: pick(numbering.start_from, target.cue_numbering.start_from, defaults.cue_numbering.start_from),
              prefix: pick(numbering.prefix, target.cue_numbering.prefix, defaults.cue_numbering.prefix),
              padding: pick(numbering.padding, target.cue_numbering.padding, defaults.cue_numbering.padding),
            },
    tod_display_format: pick(patch.tod_display_format, target.tod_display_format, defaults.tod_display_format),
  };
}

/** Issues with the values of a settings patch (out of range, too long), each at its path. */
export function settingsPatchIssues(patch: SettingsPatch, path: (string | number)[] = ['settings']): Issue[] {
  const issues: Issue[] = [];
  const numbering = patch.cue_numbering;
  const at = (key: string) => [...path, 'cue_numbering', key];
  const { start_from, padding, prefixChars } = cueNumberingLimits;
  if (numbering?.start_from != null && !inRange(numbering.start_from, start_from)) {
    issues.push({ path: at('start_from'), message: `Must be an integer from ${start_from.min} to ${start_from.max}.`, code: 'too_big' });
  }
  if (numbering?.prefix != null && !withinChars(numbering.prefix, prefixChars)) {
    issues.push({ path: at('prefix'), message: `Must be at most ${prefixChars} characters.`, code: 'too_big' });
  }
  if (numbering?.padding != null && !inRange(numbering.padding, padding)) {
    issues.push({ path: at('padding'), message: `Must be an integer from ${padding.min} to ${padding.max}.`, code: 'too_big' });
  }
  if (patch.tod_display_format != null && !todDisplayFormats.includes(patch.tod_display_format)) {
    issues.push({ path: [...path, 'tod_display_format'], message: 'Must be "12h", "24h" or null.', code: 'invalid_value' });
  }
  return issues;
}

export function checkSettingsPatch(patch: SettingsPatch): void {
  const issues = settingsPatchIssues(patch);
  if (issues.length) throw AppError.validation('rundowns.invalid_payload', issues);
}

const inRange = (n: number, range: { min: number; max: number }) => Number.isInteger(n) && n >= range.min && n <= range.max;
