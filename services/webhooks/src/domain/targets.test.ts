import { describe, expect, it } from 'vitest';
import { addressRefusal, parseTarget, type TargetPolicy } from './targets.js';

const strict: TargetPolicy = { allowedHosts: [], allowedNetworks: [], allowHttp: false };
const local: TargetPolicy = { allowedHosts: ['127.0.0.1', 'localhost'], allowedNetworks: [], allowHttp: false };

const reason = (url: string, policy = strict) => {
  const parsed = parseTarget(url, policy);
  return parsed.ok ? undefined : parsed.reason;
};

describe('webhook targets', () => {
  it('take https to a public address or name', () => {
    expect(reason('https://example.com/hook')).toBeUndefined();
    expect(reason('https://93.184.216.34:8443/hook')).toBeUndefined();
    expect(reason('https://[2606:2800:220:1:248:1893:25c8:1946]/hook')).toBeUndefined();
  });

  it('refuse plain http, credentials and what is not a URL', () => {
    expect(reason('http://example.com/hook')).toBe('the URL must be https://');
    expect(reason('ftp://example.com/hook')).toBe('the URL must be https://');
    expect(reason('https://user:pass@example.com/hook')).toBe('the URL must not carry credentials');
    expect(reason('/relative')).toBe('not an absolute URL');
    expect(reason(`https://example.com/${'a'.repeat(2_100)}`)).toMatch(/longer than/);
  });

  it('refuse loopback, private, link-local (metadata), CGNAT, multicast and unspecified addresses, IPv4-mapped ones too', () => {
    for (const [address, kind] of [
      ['127.0.0.1', 'loopback'],
      ['127.8.9.10', 'loopback'],
      ['::1', 'loopback'],
      ['::ffff:127.0.0.1', 'loopback'],
      ['10.1.2.3', 'private'],
      ['172.16.0.1', 'private'],
      ['192.168.0.1', 'private'],
      ['fd00:ec2::254', 'private'],
      ['100.64.0.1', 'private'],
      ['169.254.169.254', 'link-local'],
      ['fe80::1', 'link-local'],
      ['224.0.0.1', 'multicast'],
      ['0.0.0.0', 'unspecified'],
    ] as const) {
      expect(addressRefusal(address, strict), address).toContain(kind);
    }
    expect(addressRefusal('93.184.216.34', strict)).toBeUndefined();
    expect(reason('https://[::ffff:10.0.0.1]/x')).toMatch(/private/);
  });

  it('let configured hosts use plain http and any address, and configured networks be reached over https', () => {
    expect(reason('http://127.0.0.1:9000/hook', local)).toBeUndefined();
    expect(reason('http://localhost:9000/hook', local)).toBeUndefined();
    expect(reason('http://127.0.0.2:9000/hook', local)).toBe('the URL must be https://');
    expect(reason('https://127.0.0.2:9000/hook', local)).toMatch(/loopback/);
    expect(addressRefusal('10.20.0.5', { allowedNetworks: ['10.20.0.0/16'] })).toBeUndefined();
    expect(addressRefusal('10.21.0.5', { allowedNetworks: ['10.20.0.0/16'] })).toMatch(/private/);
    expect(reason('http://example.com/', { ...strict, allowHttp: true })).toBeUndefined();
    expect(reason('http://10.0.0.1/', { ...strict, allowHttp: true })).toMatch(/private/);
  });
});
