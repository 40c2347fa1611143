import { z } from 'zod';

/** The event names a client may subscribe to (docs/api-decisions.md#events); `status` always rides along. */
export const EVENT_NAMES = ['rundown', 'cue', 'column', 'cell', 'mention', 'text_variable', 'output_message'] as const;
export type EventName = (typeof EVENT_NAMES)[number];

/** The names whose frames can carry the full record (`<name>:fat`). */
const FAT_NAMES: readonly EventName[] = ['rundown', 'cue', 'column'];

/**
 * Computed frames a stream carries only when named (extension, docs/api-decisions.md#timing): `timing` (the timing
 * object on every runner change and every edit that changes the plan). Not part of "every name".
 */
export const COMPUTED_NAMES = ['timing'] as const;

/** What one stream carries: each subscribed name, thin or fat. */
export interface Subscription {
  /** name → whether its frames carry the full record. */
  readonly names: ReadonlyMap<EventName, boolean>;
  /** Whether `timing` frames were asked for. */
  readonly timing: boolean;
}

const known = new Set<string>(EVENT_NAMES);

/**
 * `events=cue:fat,mention` → the subscription. Absent: every name, thin. Empty (`events=`): none
 * but `status`. `status` may be named (it rides along anyway); a name given twice keeps its fattest
 * form. Anything else is an issue of its own (the answer is 400 `bad_request`).
 */
export const eventsQuery = z
  .object({
    events: z
      .string({ error: 'must be given once, as a comma-separated list' })
      .max(512)
      .optional()
      .describe(
        `Comma-separated event names to receive: ${EVENT_NAMES.join(', ')}; \`rundown:fat\`, \`cue:fat\` and \`column:fat\` add the full record. ` +
          '`status` always rides along. Absent: every name, thin. `timing` (only when named) adds the timing object of `GET /rundowns/{id}/timing` ' +
          'on every runner change and every edit that changes the plan.',
      ),
  })
  .transform((query, ctx): Subscription => {
    const names = new Map<EventName, boolean>();
    if (query.events === undefined) {
      for (const name of EVENT_NAMES) names.set(name, false);
      return { names, timing: false };
    }
    let timing = false;
    for (const raw of query.events.split(',')) {
      const item = raw.trim();
      if (item === '' || item === 'status') continue;
      if (item === 'timing') {
        timing = true;
        continue;
      }
      const [name = '', suffix] = item.split(':', 2) as [string, string | undefined];
      const fat = suffix === 'fat';
      if (!known.has(name) || (suffix !== undefined && !fat) || item.split(':').length > 2) {
        ctx.addIssue({ code: 'custom', path: ['events'], message: `Unknown event name "${item}"; known: ${[...EVENT_NAMES, ...COMPUTED_NAMES].join(', ')}, status.` });
        continue;
      }
      if (fat && !FAT_NAMES.includes(name as EventName)) {
        ctx.addIssue({ code: 'custom', path: ['events'], message: `"${item}": only ${FAT_NAMES.map((n) => `${n}:fat`).join(', ')} exist.` });
        continue;
      }
      names.set(name as EventName, fat || (names.get(name as EventName) ?? false));
    }
    return { names, timing };
  });

/** The subscription as `ready` echoes it: every name the stream carries, `:fat` where fat, then `status`. */
export function subscriptionList(subscription: Subscription): string[] {
  const out: string[] = [];
  for (const name of EVENT_NAMES) {
    const fat = subscription.names.get(name);
    if (fat !== undefined) out.push(fat ? `${name}:fat` : name);
  }
  if (subscription.timing) out.push('timing');
  out.push('status');
  return out;
}
