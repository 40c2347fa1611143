import { describe, expect, it } from 'vitest';
import { canonicalJson, fingerprint } from './idempotency.js';

describe('canonicalJson', () => {
  it('sorts keys at every depth and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { y: 1, x: 0 }], c: null } })).toBe('{"a":{"c":null,"d":[2,{"x":0,"y":1}]},"b":1}');
    expect(canonicalJson(undefined)).toBe('');
  });
});

describe('fingerprint', () => {
  it('is the same for the same method, path and body in any key order', () => {
    expect(fingerprint('post', '/v1/rundowns', { a: 1, b: 2 })).toBe(fingerprint('POST', '/v1/rundowns', { b: 2, a: 1 }));
  });

  it('differs when the method, the path or the body differs', () => {
    const base = fingerprint('POST', '/v1/rundowns', { a: 1 });
    expect(fingerprint('PATCH', '/v1/rundowns', { a: 1 })).not.toBe(base);
    expect(fingerprint('POST', '/v1/rundowns/x', { a: 1 })).not.toBe(base);
    expect(fingerprint('POST', '/v1/rundowns', { a: 2 })).not.toBe(base);
    expect(fingerprint('POST', '/v1/rundowns', undefined)).not.toBe(base);
    // A body that is not JSON is fingerprinted by its text, never confused with a JSON body.
    expect(fingerprint('POST', '/v1/rundowns', undefined, '{"a":1')).not.toBe(fingerprint('POST', '/v1/rundowns', undefined, '{"a":2'));
    expect(fingerprint('POST', '/v1/rundowns', undefined, 'json:{"a":1}')).not.toBe(base);
  });
});
