/**
 * The server's clock as this page estimates it, from the timestamps the server sends (`server_time`
 * of `ready` and `status`, `at` of `heartbeat`).
 *
 * Each timestamp was taken before its frame left the server, so `server_time - local time at
 * arrival` is the true offset minus the frame's delay: never more than the offset. The estimate is the
 * largest such sample of the last `windowMs` (the frame that travelled fastest), so a frame that
 * arrives late (a slow network, a replayed frame, a tab that was asleep) never pulls the clock back,
 * and the window lets the estimate follow a clock that drifts or is stepped.
 *
 * `now()` never runs backwards by less than `maxHoldMs`: when the estimate falls by that much or less
 * (its best sample left the window), the clock holds still until real time catches up, so a
 * countdown never ticks back up. A larger fall (the local clock was stepped) applies at once.
 */
export class ServerClock {
  private samples: { at: number; offset: number }[] = [];
  private offset: number | undefined;
  private last = -Infinity;

  constructor(
    private readonly windowMs: number,
    private readonly local: () => number = Date.now,
    private readonly maxHoldMs = 1_000,
  ) {}

  /** A server timestamp that arrived just now. */
  sample(serverTime: number): void {
    if (!Number.isFinite(serverTime)) return;
    const at = this.local();
    this.samples.push({ at, offset: serverTime - at });
    // Keep the window, and always the newest sample.
    const from = this.samples.findIndex((s) => s.at >= at - this.windowMs);
    if (from > 0) this.samples.splice(0, from);
    this.offset = Math.max(...this.samples.map((s) => s.offset));
  }

  /** Whether any sample arrived (before that, `now()` is the local clock). */
  get synced(): boolean {
    return this.offset !== undefined;
  }

  /** The current offset estimate (server - local), ms. */
  get offsetMs(): number {
    return this.offset ?? 0;
  }

  /** The server's time now, ms since the epoch. */
  now(): number {
    const estimate = this.local() + this.offsetMs;
    if (estimate < this.last && this.last - estimate <= this.maxHoldMs) return this.last;
    this.last = estimate;
    return estimate;
  }
}
