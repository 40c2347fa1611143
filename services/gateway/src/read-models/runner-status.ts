import { AppError, canSee, couldSee, RUNNER_STATUS_CHANNEL, runnerStatusKey, type Logger, type RedisClient, type StoredRunnerStatus } from '@rundown/shared/core';
import type { Principal } from '../edge/authenticator.js';

/** Rundowns whose status one gateway keeps in memory (the busiest; the rest are read from Redis). */
const HOT_MAX = 10_000;

/**
 * The runner status read model: the hottest read, every display polls it. The runner writes each
 * committed status to Redis (`runner:status:<id>`, newer revisions only) and publishes it on
 * `runner:status` before its action answers. A gateway keeps the rundowns it serves in memory, kept
 * current by that channel, so a poll costs no round trip at all; a rundown it does not hold is one
 * Redis GET; one never read before (no key) or a Redis outage answers undefined: the caller then
 * asks the runner (PostgreSQL), which fills the key.
 *
 * The memory is used only while the subscription is up (it is dropped when the subscriber
 * disconnects, and refilled from Redis after), and a newer revision always wins, whichever of the
 * channel and a GET brings it first; a removed rundown leaves a tombstone, so a GET that raced the
 * removal cannot bring it back.
 */
export class RunnerStatusReader {
  private readonly hot = new Map<string, StoredRunnerStatus | 'removed'>();
  private live = false;

  constructor(
    private readonly redis: RedisClient,
    private readonly logger: Logger,
    private readonly subscriber?: RedisClient,
  ) {
    if (!subscriber) return;
    subscriber.on('message', (_channel: string, message: string) => this.heard(message));
    subscriber.on('ready', () => {
      subscriber.subscribe(RUNNER_STATUS_CHANNEL).then(
        () => {
          this.live = true;
        },
        (err: Error) => logger.warn({ err: err.message }, 'runner status channel: subscribe failed'),
      );
    });
    subscriber.on('close', () => {
      this.live = false;
      this.hot.clear();
    });
    subscriber.on('error', (err: Error) => logger.warn({ err: err.message }, 'runner status channel error'));
  }

  async get(principal: Principal, rundownId: string): Promise<StoredRunnerStatus | undefined> {
    // Who may see a rundown, as every service decides it (shared canSee).
    const viewer = { teamId: principal.teamId, tokenRundownId: principal.rundownId };
    if (!couldSee(viewer, rundownId)) throw new AppError('rundowns.not_found');
    let stored = this.live ? this.hot.get(rundownId) : undefined;
    if (stored === 'removed') throw new AppError('rundowns.not_found');
    if (!stored) {
      let raw: string | null;
      try {
        raw = await this.redis.get(runnerStatusKey(rundownId));
      } catch (err) {
        this.logger.warn({ err: (err as Error).message }, 'runner status read model unavailable; asking the runner');
        return undefined;
      }
      if (raw === null) return undefined;
      stored = JSON.parse(raw) as StoredRunnerStatus;
      this.keep(stored);
    }
    if (!canSee(viewer, { id: rundownId, teamId: stored.team_id })) throw new AppError('rundowns.not_found');
    return stored;
  }

  private heard(message: string): void {
    let parsed: StoredRunnerStatus | { rundown_id: string; removed: true };
    try {
      parsed = JSON.parse(message) as typeof parsed;
    } catch {
      return;
    }
    if ('removed' in parsed) {
      this.hot.delete(parsed.rundown_id);
      this.hot.set(parsed.rundown_id, 'removed');
      return;
    }
    // Every change is kept (bounded), also of rundowns not yet asked for: a GET in flight that raced
    // this message must not win with its older revision.
    this.keep(parsed);
  }

  private keep(status: StoredRunnerStatus): void {
    if (!this.live) return;
    const current = this.hot.get(status.rundown_id);
    if (current === 'removed' || (current && current.revision > status.revision)) return;
    if (!current && this.hot.size >= HOT_MAX) {
      const oldest = this.hot.keys().next().value;
      if (oldest !== undefined) this.hot.delete(oldest);
    }
    this.hot.set(status.rundown_id, status);
  }
}
