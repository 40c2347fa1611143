import { createHash } from 'node:crypto';
import type { timingJson } from '@rundown/shared';

export type TimingObject = ReturnType<typeof timingJson>;

const digest = (value: unknown) => createHash('sha256').update(JSON.stringify(value)).digest('base64url');
const since = (at: number | null, now: number) => (at === null ? null : at - now);

/**
 * What identifies a timing for `timing.changed`, apart from the moment it was computed: two digests,
 * one of the object without its clock, one with its projections taken relative to the clock. A show
 * not started projects from now (every projection moves with the clock); a running show's projections
 * hang on its actual starts (none moves). A timing is unchanged when either digest is the last one's.
 */
export function timingDigest(timing: TimingObject): string {
  const { server_time: now, ...view } = timing;
  const relative = { ...view, projected_end: since(view.projected_end, now), cues: view.cues.map((c) => ({ ...c, projected_start: since(c.projected_start, now) })) };
  return `${digest(view)} ${digest(relative)}`;
}

/** Whether a timing of digest `next` says nothing that the one of digest `last` did not (null: none sent yet). */
export function sameTiming(last: string | null, next: string): boolean {
  if (last === null) return false;
  const [lastAbsolute, lastRelative] = last.split(' ');
  const [absolute, relative] = next.split(' ');
  return lastAbsolute === absolute || lastRelative === relative;
}
