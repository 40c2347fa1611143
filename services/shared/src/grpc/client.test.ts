import { describe, expect, it } from 'vitest';
import { grpcTarget } from './client.js';

describe('grpcTarget', () => {
  it('keeps one address or a dns:/// name as it is', () => {
    expect(grpcTarget('rundown:50052')).toBe('rundown:50052');
    expect(grpcTarget('dns:///rundown-headless:50052')).toBe('dns:///rundown-headless:50052');
  });
  it('turns a list of replicas into a static ipv4: list (round-robin over all of them)', () => {
    expect(grpcTarget('127.0.0.1:1001, 127.0.0.1:1002')).toBe('ipv4:127.0.0.1:1001,127.0.0.1:1002');
  });
  it('refuses a list of names (grpc-js resolves one name per target)', () => {
    expect(() => grpcTarget('a:1,b:2')).toThrow(/IPv4/);
  });
});
