/**
 * The retry rules (§11): after attempt n (1-based) fails, the next comes `schedule[n - 1]` ms later;
 * after the last one the delivery is failed. An endpoint whose attempts have all failed since
 * `failing_since` for `disableAfterMs` is disabled.
 */
export interface RetryRules {
  schedule: readonly number[];
  disableAfterMs: number;
}

/** When the next attempt is due after `attempts` failed ones (undefined: none, the delivery is failed). */
export function nextAttemptDelay(rules: RetryRules, attempts: number): number | undefined {
  return rules.schedule[attempts - 1];
}

/** Whether a failure now disables the endpoint (its attempts have all failed since `failingSince`). */
export function disables(rules: RetryRules, failingSince: Date | null, now: Date): boolean {
  return failingSince !== null && now.getTime() - failingSince.getTime() >= rules.disableAfterMs;
}

export const disabledReason = (rules: RetryRules) =>
  `Every delivery failed for ${humanDuration(rules.disableAfterMs)}; enable the endpoint again to resume with new events.`;

function humanDuration(ms: number): string {
  const units: [number, string][] = [
    [86_400_000, 'day'],
    [3_600_000, 'hour'],
    [60_000, 'minute'],
    [1_000, 'second'],
  ];
  for (const [size, name] of units) {
    if (ms >= size && ms % size === 0) {
      const n = ms / size;
      return `${n} ${name}${n === 1 ? '' : 's'}`;
    }
  }
  return `${ms} ms`;
}
