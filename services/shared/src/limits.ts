/**
 * The limits table: one place for every structural cap and plan quota. Validation, the
 * domain rules, the error details and the documentation all read from here. A length in
 * characters (`…Chars`) counts code points, as JSON Schema's `maxLength` does: `textLength`.
 */
export const limits = {
  bodyBytes: 1_048_576,
  /** Deepest nesting of arrays and objects a JSON body may have (real bodies stay under 8). */
  jsonDepth: 64,
  includeCells: 1_000,
  /**
   * The largest answer the export's internal calls take (the cells of a whole rundown, then the
   * whole rundown): gRPC's default is 4 MB, which a 1,000-cue, 20-column rundown's cells come near.
   */
  exportMessageBytes: 64 * 1024 * 1024,
  /**
   * The internal deadline of storing a large create's cells (over 10,000) and, with a margin for the
   * rest of it, of an import: at the caps a 1 MB body is 49,500 cells, which can take longer than the
   * 5 s every other call has.
   */
  wholeRundownWriteMs: 30_000,
  /** A create storing more cells than this is a large one, with `wholeRundownWriteMs`. */
  wholeRundownLargeCells: 10_000,
  bulkItems: 500,
  cuesPerRundown: 1_000,
  columnsPerRundown: 50,
  mentionsPerRundown: 100,
  textVariablesPerRundown: 100,
  /** Webhook endpoints per team (§11). */
  webhooksPerTeam: 20,
  webhookDescriptionChars: 500,
  webhookUrlChars: 2_048,
  cellContentChars: 100_000,
  idempotencyKeyChars: 256,
  /** The longest id a client may send (every id we issue is shorter; a client-chosen cue id is at most this). */
  idChars: 64,
  page: { min: 1, max: 100, default: 50 },
  rundownTitleChars: 255,
  cueTitleChars: 500,
  cueSubtitleChars: 1_000,
  durationMsMax: 604_800_000,
  columnNameChars: 100,
  mentionNameChars: 100,
  mentionDescriptionChars: 1_000,
  textVariableValueChars: 10_000,
  /** Text-variable keys: the characters and length allowed. */
  textVariableKey: /^[A-Za-z0-9_]{1,64}$/,
  outputMessageChars: 1_000,
  /** Cue numbering may start anywhere in 0..1,000,000 (the value travels as int32). */
  cueNumberingStartFromMax: 1_000_000,
  /** Cue numbering's prefix (characters) and zero padding (digits). */
  cueNumberingPrefixChars: 10,
  cueNumberingPadding: { min: 1, max: 6 },
  v0RequestsPerMinute: 60,
  anonymousRequestsPerMinute: 600,
  tokenTtlSecondsDefault: 90 * 24 * 3600,
} as const;

/**
 * The text fields of each resource and their caps, from the table above: the owning service enforces
 * them (`lengthIssues`) and the gateway's schemas describe them, so both read one definition.
 */
export const textLimits = {
  rundown: { title: limits.rundownTitleChars },
  column: { name: limits.columnNameChars },
  cue: { title: limits.cueTitleChars, subtitle: limits.cueSubtitleChars },
  mention: { name: limits.mentionNameChars, description: limits.mentionDescriptionChars },
  textVariable: { value: limits.textVariableValueChars },
  outputMessage: { text: limits.outputMessageChars },
  cell: { content: limits.cellContentChars },
} as const;

/** A text's length as the limits count it: code points (an emoji is one), not UTF-16 code units. */
export function textLength(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/** Whether a text is at most `max` characters long (code points); a text of at most `max` UTF-16 units always is. */
export function withinChars(text: string, max: number): boolean {
  return text.length <= max || textLength(text) <= max;
}

/** One issue per string field of `values` longer than its cap in `caps` (absent fields pass), at `path`. */
export function lengthIssues(values: object, caps: Readonly<Record<string, number>>, path: readonly (string | number)[] = []): { path: (string | number)[]; message: string; code: 'too_big' }[] {
  const issues: { path: (string | number)[]; message: string; code: 'too_big' }[] = [];
  for (const [field, max] of Object.entries(caps)) {
    const value = (values as Record<string, unknown>)[field];
    if (typeof value === 'string' && !withinChars(value, max)) issues.push({ path: [...path, field], message: `At most ${max} characters.`, code: 'too_big' });
  }
  return issues;
}

export const plans = {
  free: { requestsPerMinute: 20, maxRundowns: 10 },
  paid: { requestsPerMinute: 120, maxRundowns: 1_000 },
} as const;

export type PlanName = keyof typeof plans;
