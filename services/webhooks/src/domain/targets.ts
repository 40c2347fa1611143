import ipaddr from 'ipaddr.js';

/**
 * Where deliveries may go (§11, SSRF-safe by default). Pure rules: the URL's form here, the
 * resolved address by `addressRefusal`; the resolving and the pinned connection are in
 * delivery/target-resolver.ts. Address classes come from ipaddr.js (the ranges of the IANA
 * special-purpose registries), not from hand-written prefixes.
 */
export interface TargetPolicy {
  /** Hosts (as written in the URL, lower case) exempt from every rule: plain http and any address. */
  allowedHosts: readonly string[];
  /** Networks (CIDR) whose addresses are allowed although internal. */
  allowedNetworks: readonly string[];
  /** Plain http:// to any host. */
  allowHttp: boolean;
}

export interface Target {
  url: URL;
  /** The host as in the URL, without IPv6 brackets. */
  host: string;
  port: number;
  /** The host is in `allowedHosts`: no address rule applies. */
  exempt: boolean;
  /** The host is an address literal (nothing to resolve). */
  literal: boolean;
}

export type Checked<T> = { ok: true; value: T } | { ok: false; reason: string };

const MAX_URL_CHARS = 2_048;

/** The URL's form: absolute, https (or an allowed exception), no credentials, a host. */
export function parseTarget(raw: string, policy: TargetPolicy): Checked<Target> {
  if (raw.length > MAX_URL_CHARS) return { ok: false, reason: `the URL is longer than ${MAX_URL_CHARS} characters` };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'not an absolute URL' };
  }
  if (url.username || url.password) return { ok: false, reason: 'the URL must not carry credentials' };
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (!host) return { ok: false, reason: 'the URL has no host' };
  const exempt = policy.allowedHosts.map((h) => h.toLowerCase()).includes(host);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && (exempt || policy.allowHttp))) {
    return { ok: false, reason: 'the URL must be https://' };
  }
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  const literal = ipaddr.isValid(host);
  if (literal && !exempt) {
    const refusal = addressRefusal(host, policy);
    if (refusal) return { ok: false, reason: refusal };
  }
  return { ok: true, value: { url, host, port, exempt, literal } };
}

/** Why a delivery may not connect to this address (undefined: it may): anything but a public unicast address, unless in an allowed network. */
export function addressRefusal(address: string, policy: Pick<TargetPolicy, 'allowedNetworks'>): string | undefined {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address);
  } catch {
    return `${address} is not an IP address`;
  }
  // ::ffff:127.0.0.1 is 127.0.0.1.
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  for (const cidr of policy.allowedNetworks) {
    try {
      const [network, bits] = ipaddr.parseCIDR(cidr);
      if (network.kind() === parsed.kind() && parsed.match([network, bits] as never)) return undefined;
    } catch {
      // a malformed entry allows nothing (the config check reports it)
    }
  }
  const range = parsed.range();
  if (range === 'unicast') return undefined;
  return `the URL resolves to ${address}, a ${rangeName(range)} address`;
}

function rangeName(range: string): string {
  switch (range) {
    case 'loopback':
      return 'loopback';
    case 'private':
    case 'uniqueLocal':
    case 'carrierGradeNat':
      return 'private';
    case 'linkLocal':
      return 'link-local (cloud metadata among them)';
    case 'unspecified':
      return 'unspecified';
    case 'multicast':
    case 'broadcast':
      return range;
    default:
      return `reserved (${range})`;
  }
}

/** The entries of a network allow-list that are not CIDR (a config check: none for a valid list). */
export function invalidNetworks(networks: readonly string[]): string[] {
  return networks.filter((cidr) => {
    try {
      ipaddr.parseCIDR(cidr);
      return false;
    } catch {
      return true;
    }
  });
}
