import { randomToken, type Logger, type RedisClient } from '@rundown/shared';

/** One endpoint's attempts in flight, every replica's: a sorted set of slot tokens scored by when each lapses. */
export const endpointSlotsKey = (endpointId: string) => `webhooks:slots:{${endpointId}}`;

/** Redis's clock in ms, in a script (the replicas' clocks do not matter). */
const NOW = `local t = redis.call('TIME') local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/** Takes a slot when fewer than the bound are held (lapsed ones dropped first). KEYS[1] the set; ARGV: bound, lease ms, token. */
const TAKE = `${NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`;

/** Extends a slot still held (0 if it lapsed and was dropped). KEYS[1] the set; ARGV: lease ms, token. */
const RENEW = `${NOW}
if not redis.call('ZSCORE', KEYS[1], ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
`;

interface SlotCommands {
  webhooksTakeSlot(key: string, bound: number, leaseMs: number, token: string): Promise<number>;
  webhooksRenewSlot(key: string, leaseMs: number, token: string): Promise<number>;
}

/** A slot held: given back at once, or parked for this replica's next attempt to the same endpoint. */
export interface Slot {
  release(): void;
  /** Kept for the next `take` of the endpoint here (an attempt waiting for it), given back if none comes within `parkMs`. */
  park(): void;
}


interface Held {
  token: string;
  /** When Redis last set its lapse (this process's clock): renewed before reuse past half the lease. */
  renewedAt: number;
}

/**
 * The per-endpoint bound on attempts in flight across every replica (§11: "deliveries of one endpoint
 * run concurrently up to a small bound"), on top of each replica's own count. A slot lapses after
 * `leaseMs` if its replica dies holding it. A replica with more attempts waiting for an endpoint parks
 * the slot an attempt ends with and its next attempt takes it, with no Redis call: a busy endpoint's
 * attempts cost Redis nothing each, an idle one's a take and a give-back. When Redis cannot be asked,
 * the attempt goes ahead under the replica's own bound: the bound spares the receiver, it guards nothing.
 */
export class EndpointSlots {
  private readonly parked = new Map<string, { held: Held; timer: NodeJS.Timeout }[]>();

  constructor(
    private readonly redis: RedisClient,
    private readonly bound: number,
    private readonly leaseMs: number,
    private readonly logger: Logger,
    /** How long a parked slot waits for this replica's next attempt to its endpoint. */
    private readonly parkMs = 100,
  ) {
    if (!('webhooksTakeSlot' in redis)) {
      redis.defineCommand('webhooksTakeSlot', { numberOfKeys: 1, lua: TAKE });
      redis.defineCommand('webhooksRenewSlot', { numberOfKeys: 1, lua: RENEW });
    }
  }

  private get commands(): SlotCommands {
    return this.redis as unknown as SlotCommands;
  }

  /** A slot of the endpoint's, or undefined while every one is held. */
  async take(endpointId: string): Promise<Slot | undefined> {
    const key = endpointSlotsKey(endpointId);
    try {
      const reused = await this.unpark(endpointId, key);
      if (reused) return this.slot(endpointId, reused);
      const held = { token: randomToken(), renewedAt: Date.now() };
      if ((await this.commands.webhooksTakeSlot(key, this.bound, this.leaseMs, held.token)) !== 1) return undefined;
      return this.slot(endpointId, held);
    } catch (err) {
      this.logger.warn({ err: (err as Error).message, webhook_id: endpointId }, 'the endpoint’s slots could not be asked; the attempt goes ahead under this replica’s bound');
      return { release: () => undefined, park: () => undefined };
    }
  }

  /** A parked slot of the endpoint's, renewed first past half its lease (undefined if none, or it lapsed). */
  private async unpark(endpointId: string, key: string): Promise<Held | undefined> {
    const list = this.parked.get(endpointId);
    const entry = list?.pop();
    if (!entry) return undefined;
    if (list!.length === 0) this.parked.delete(endpointId);
    clearTimeout(entry.timer);
    const { held } = entry;
    if (Date.now() - held.renewedAt < this.leaseMs / 2) return held;
    const renewedAt = Date.now();
    if ((await this.commands.webhooksRenewSlot(key, this.leaseMs, held.token)) !== 1) return undefined;
    return { ...held, renewedAt };
  }

  private giveBack(endpointId: string, token: string): void {
    this.redis.zrem(endpointSlotsKey(endpointId), token).catch((err: Error) => this.logger.warn({ err: err.message, webhook_id: endpointId }, 'a slot could not be given back; it lapses'));
  }

  private slot(endpointId: string, held: Held): Slot {
    let done = false;
    const giveBack = () => this.giveBack(endpointId, held.token);
    return {
      release: () => {
        if (done) return;
        done = true;
        giveBack();
      },
      park: () => {
        if (done) return;
        done = true;
        const list = this.parked.get(endpointId) ?? [];
        const entry = {
          held,
          timer: setTimeout(() => {
            const at = list.indexOf(entry);
            if (at >= 0) list.splice(at, 1);
            if (list.length === 0 && this.parked.get(endpointId) === list) this.parked.delete(endpointId);
            giveBack();
          }, this.parkMs),
        };
        entry.timer.unref();
        list.push(entry);
        this.parked.set(endpointId, list);
      },
    };
  }

  /** Gives back every parked slot (the replica stopping). */
  close(): void {
    for (const [endpointId, list] of this.parked) {
      for (const { held, timer } of list) {
        clearTimeout(timer);
        this.giveBack(endpointId, held.token);
      }
    }
    this.parked.clear();
  }
}
