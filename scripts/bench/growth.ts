// The soak's rule for "grows without bound", as a pure function over one process's samples.
//
// Samples taken during the warm-up are ignored. What remains is split in two halves by time. The metric
// grows without bound when BOTH hold:
//   1. the least-squares slope over the second half, per hour, is above the limit (a leak that keeps
//      going, not one step during start-up), and
//   2. the last sample is above every sample of the first half (still setting new highs; a sawtooth
//      of garbage collection or a pool that has filled up does not).
// With fewer than 3 samples in the second half, nothing can be concluded (`undecided`).

export interface Point {
  /** Seconds since the start of the run. */
  t: number;
  value: number;
}

export interface GrowthVerdict {
  /** Slope of the second half, per hour (NaN when undecided). */
  slopePerHour: number;
  grows: boolean;
  undecided: boolean;
}

/** Least-squares slope (value per second) of the points; 0 for fewer than two distinct times. */
export function slope(points: Point[]): number {
  const n = points.length;
  if (n < 2) return 0;
  const mt = points.reduce((a, p) => a + p.t, 0) / n;
  const mv = points.reduce((a, p) => a + p.value, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.t - mt) * (p.value - mv);
    den += (p.t - mt) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

export function growthVerdict(points: Point[], warmupSeconds: number, limitPerHour: number): GrowthVerdict {
  const settled = points.filter((p) => p.t >= warmupSeconds && Number.isFinite(p.value));
  if (settled.length < 2) return { slopePerHour: Number.NaN, grows: false, undecided: true };
  const middle = (settled[0]!.t + settled.at(-1)!.t) / 2;
  const first = settled.filter((p) => p.t < middle);
  const second = settled.filter((p) => p.t >= middle);
  if (second.length < 3 || first.length < 1) return { slopePerHour: Number.NaN, grows: false, undecided: true };
  const slopePerHour = slope(second) * 3600;
  const newHigh = second.at(-1)!.value > Math.max(...first.map((p) => p.value));
  return { slopePerHour, grows: slopePerHour > limitPerHour && newHigh, undecided: false };
}
