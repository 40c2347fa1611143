import { z } from 'zod';

/** The event names a client may subscribe to (CONTRACT §7); `status` always rides along. */
export const EVENT_NAMES = ['rundown', 'cue', 'column', 'cell', 'mention', 'text_variable', 'output_message'] as const;
export type EventName = (typeof EVENT_NAMES)[number];

/** The names whose frames can carry the full record (`<name>:fat`). */
const FAT_NAMES: readonly EventName[] = ['rundown', 'cue', 'column'];

/** What one stream carries: each subscribed name, thin or fat. */
export interface Subscription {
  /** name → whether its frames carry the full record. */
  readonly names: ReadonlyMap<EventName, boolean>;
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
          '`status` always rides along. Absent: every name, thin.',
      ),
  })
  .transform((query, ctx): Subscription => {
    const names = new Map<EventName, boolean>();
    if (query.events === undefined) {
      for (const name of EVENT_NAMES) names.set(name, false);
      return { names };
    }
    for (const raw of query.events.split(',')) {
      const item = raw.trim();
      if (item === '' || item === 'status') continue;
      const [name = '', suffix] = item.split(':', 2) as [string, string | undefined];
      const fat = suffix === 'fat';
      if (!known.has(name) || (suffix !== undefined && !fat) || item.split(':').length > 2) {
        ctx.addIssue({ code: 'custom', path: ['events'], message: `Unknown event name "${item}"; known: ${EVENT_NAMES.join(', ')}, status.` });
        continue;
      }
      if (fat && !FAT_NAMES.includes(name as EventName)) {
        ctx.addIssue({ code: 'custom', path: ['events'], message: `"${item}": only ${FAT_NAMES.map((n) => `${n}:fat`).join(', ')} exist.` });
        continue;
      }
      names.set(name as EventName, fat || (names.get(name as EventName) ?? false));
    }
    return { names };
  });

/** The subscription as `ready` echoes it: every name the stream carries, `:fat` where fat, then `status`. */
export function subscriptionList(subscription: Subscription): string[] {
  const out: string[] = [];
  for (const name of EVENT_NAMES) {
    const fat = subscription.names.get(name);
    if (fat !== undefined) out.push(fat ? `${name}:fat` : name);
  }
  out.push('status');
  return out;
}
