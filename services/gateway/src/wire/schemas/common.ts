import { z } from 'zod';
import { checkBulkSize, limits, withinChars } from '@rundown/shared/core';

/**
 * A query parameter given once (Express turns a repeated one into an array). The OpenAPI document
 * describes it by the inner schema's input (its pattern, lengths), not by the bare outer string.
 */
export const single = <T extends z.ZodType<unknown, string>>(schema: T) => {
  const { $schema: _dialect, ...input } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return z.string({ error: 'must be given once, as a string' }).pipe(schema).meta(input);
};

/**
 * A string of at most `max` characters as the limits count them: code points, as the document's
 * `maxLength` and the owning service (shared `withinChars`) count them, where zod's own `.max` counts
 * UTF-16 units. Refused as zod's `.max` refuses (`too_big`, same message), documented as `maxLength`.
 */
export const maxChars = <T extends z.ZodString>(schema: T, max: number): T =>
  schema
    .superRefine((value, ctx) => {
      if (!withinChars(value, max)) ctx.addIssue({ code: 'too_big', origin: 'string', maximum: max, inclusive: true, input: value });
    })
    .meta({ maxLength: max });

/**
 * An id a client sends in a body (a reference, or a cue's chosen id): no longer than any id we
 * issue, so an echo of it stays small and garbage never travels inward (a 400 of the route's resource).
 */
export const idRef = z.string().min(1).max(limits.idChars, `Longer than any id (at most ${limits.idChars} characters).`);

/** `?limit=` of a paginated list: digits read as a whole number in the page range (and documented as that integer). */
export const pageLimit = z
  .string()
  .regex(/^\d+$/, 'must be an integer')
  .transform(Number)
  .pipe(z.number().int().min(limits.page.min).max(limits.page.max))
  .meta({ type: 'integer', minimum: limits.page.min, maximum: limits.page.max });

export const pageQuery = z.object({
  limit: single(pageLimit).optional(),
  cursor: single(z.string().min(1, 'must not be empty')).optional(),
});

/** Canonical IANA name for a time zone the runtime knows, or undefined. */
export function canonicalTimeZone(value: string): string | undefined {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: value }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

/**
 * The OpenAPI extension naming a rule on a body that JSON Schema cannot state (a comparison between
 * members, a comparison after trimming): the rest of the document is exact.
 */
export const UNSTATED_RULE = 'x-unstated-rule';

/**
 * A text that `.trim()` must leave non-empty, as JSON Schema states it (zod's JSON Schema shows the
 * length bounds only): at least one non-space character (JavaScript's \s is what trim removes).
 */
export const notBlank = { pattern: '\\S' };

/**
 * The OpenAPI format of a time zone: an IANA name the service's time zone database knows (the list
 * depends on the runtime's ICU, so the document names the rule rather than listing the names).
 */
export const TIME_ZONE_FORMAT = 'iana-time-zone';

export const timezone = z
  .string()
  .max(64)
  .meta({
    format: TIME_ZONE_FORMAT,
    description: 'An IANA time zone name, e.g. "Europe/Berlin" (an alias such as "US/Eastern" is answered by its canonical name).',
  })
  .transform((value, ctx) => {
    const zone = canonicalTimeZone(value);
    if (!zone) {
      ctx.addIssue({ code: 'custom', message: `Unknown time zone "${value}"; use an IANA name such as "Europe/Berlin".` });
      return z.NEVER;
    }
    return zone;
  });

/** Times a client does clock math on are ms since the epoch; writes also take ISO 8601. */
export const epochMs = z.union([
  z.number().int().min(0).max(8.64e15),
  z.iso.datetime({ offset: true }).transform((v) => Date.parse(v)),
]);

export const color = z.string().regex(/^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/, 'must be #rgb or #rrggbb');

/**
 * The items array of a `:bulk` operation. The size cap is checked before any item (and answers
 * its own code), so an oversized batch is refused as such whatever its items hold.
 */
export const bulkItems = <T extends z.ZodType>(item: T, resource: string) =>
  z.preprocess((value) => {
    if (Array.isArray(value)) checkBulkSize(value.length, resource);
    return value;
    // The max never fires (the check above runs first); it documents the cap in the OpenAPI document.
  }, z.array(item).max(limits.bulkItems));
