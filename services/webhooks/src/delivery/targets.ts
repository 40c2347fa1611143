import { lookup as systemLookup, Resolver } from 'node:dns/promises';
import type { LookupAddress, LookupOptions } from 'node:dns';
import ipaddr from 'ipaddr.js';
import { addressRefusal, parseTarget, type Checked, type TargetPolicy } from '../domain/targets.js';

/** A connection refused by the target rules (at connect time, on the address it would have used). */
export class TargetRefused extends Error {
  constructor(readonly reason: string) {
    super(`refused: ${reason}`);
    this.name = 'TargetRefused';
  }
}

/**
 * Resolves receivers' names and applies the target rules to what they resolve to. Two uses:
 * `check` (create and patch: the URL as a whole) and `lookup`, the DNS lookup of every delivery
 * connection (undici's `connect.lookup`): the address checked is the address connected to, so a
 * name re-pointed between check and connect cannot slip through. An address literal is checked by
 * `parseTarget` (no lookup happens for it).
 */
export class TargetResolver {
  private readonly resolver: Resolver | undefined;

  constructor(
    private readonly policy: TargetPolicy,
    /** `host:port` DNS servers; empty: the system's resolver (getaddrinfo). */
    dnsServers: readonly string[] = [],
  ) {
    if (dnsServers.length) {
      this.resolver = new Resolver({ timeout: 2_000, tries: 2 });
      this.resolver.setServers([...dnsServers]);
    }
  }

  private exempt(host: string): boolean {
    return this.policy.allowedHosts.some((h) => h.toLowerCase() === host.toLowerCase());
  }

  /** Every address of the name (A and AAAA). */
  async addresses(host: string): Promise<{ address: string; family: 4 | 6 }[]> {
    if (ipaddr.isValid(host)) return [{ address: host, family: ipaddr.parse(host).kind() === 'ipv4' ? 4 : 6 }];
    if (!this.resolver) {
      const found = await systemLookup(host, { all: true, verbatim: true });
      return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
    }
    const [v4, v6] = await Promise.all([this.resolver.resolve4(host).catch(() => []), this.resolver.resolve6(host).catch(() => [])]);
    return [...v4.map((address) => ({ address, family: 4 as const })), ...v6.map((address) => ({ address, family: 6 as const }))];
  }

  /** The addresses a delivery to `host` may connect to; refused when any is internal (all of them must be allowed). */
  async allowed(host: string): Promise<Checked<{ address: string; family: 4 | 6 }[]>> {
    let found: { address: string; family: 4 | 6 }[];
    try {
      found = await this.addresses(host);
    } catch {
      found = [];
    }
    if (found.length === 0) return { ok: false, reason: `the host name ${host} does not resolve` };
    if (this.exempt(host)) return { ok: true, value: found };
    for (const { address } of found) {
      const refusal = addressRefusal(address, this.policy);
      if (refusal) return { ok: false, reason: refusal };
    }
    return { ok: true, value: found };
  }

  /** The URL's form and what its name resolves to now (undefined: allowed; else why not). */
  async check(url: string): Promise<string | undefined> {
    const parsed = parseTarget(url, this.policy);
    if (!parsed.ok) return parsed.reason;
    if (parsed.value.literal) return undefined;
    const addresses = await this.allowed(parsed.value.host);
    return addresses.ok ? undefined : addresses.reason;
  }

  /** The URL's form alone (the address is checked at connect, by `lookup`). */
  form(url: string): Checked<URL> {
    const parsed = parseTarget(url, this.policy);
    return parsed.ok ? { ok: true, value: parsed.value.url } : parsed;
  }

  /** `net.connect`'s `lookup`: resolves, checks, and answers only allowed addresses. */
  readonly lookup = (
    host: string,
    options: LookupOptions,
    callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    this.allowed(host).then(
      (result) => {
        if (!result.ok) return callback(new TargetRefused(result.reason), '', 0);
        const wanted = options.family === 4 || options.family === 6 ? result.value.filter((a) => a.family === options.family) : result.value;
        const list = wanted.length ? wanted : result.value;
        if (options.all) return callback(null, list);
        callback(null, list[0]!.address, list[0]!.family);
      },
      (err: Error) => callback(err, '', 0),
    );
  };
}
