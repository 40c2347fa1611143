import { describe, expect, it } from 'vitest';
import { ConfigError, env, loadConfig } from './config.js';

const shape = {
  PORT: env.port(8080),
  DATABASE_URL: env.url(['postgres']),
  SECRET: env.secret(8),
  AUTH_ADDR: env.address(),
};

describe('loadConfig', () => {
  it('applies defaults and coerces types', () => {
    const config = loadConfig(shape, { DATABASE_URL: 'postgres://x@h/db', SECRET: '12345678', AUTH_ADDR: 'auth:50051' });
    expect(config).toEqual({ PORT: 8080, DATABASE_URL: 'postgres://x@h/db', SECRET: '12345678', AUTH_ADDR: 'auth:50051' });
  });

  it('reports every bad setting in one message, naming the unset ones', () => {
    let error: unknown;
    try {
      loadConfig(shape, { PORT: '99999', DATABASE_URL: 'mysql://nope', SECRET: '' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems;
    expect(problems).toHaveLength(4);
    expect(problems.find((p) => p.startsWith('PORT:'))).toBeDefined();
    expect(problems.find((p) => p.startsWith('DATABASE_URL:'))).toMatch(/postgres URL/);
    expect(problems.find((p) => p.startsWith('SECRET:'))).toMatch(/not set/);
    expect(problems.find((p) => p.startsWith('AUTH_ADDR:'))).toMatch(/not set/);
    expect((error as Error).message).toContain('invalid configuration');
  });
});

describe('a service address', () => {
  const address = { ADDR: env.address() };
  it('is one host:port, a dns:/// name for every replica behind it (or asked of a given DNS server), or a comma list of replicas', () => {
    for (const ok of ['auth:50051', 'dns:///rundown-rundown-headless:50052', 'dns://127.0.0.1:61653/rundown.replicas.test:50052', '127.0.0.1:50052,127.0.0.1:50062']) {
      expect(loadConfig(address, { ADDR: ok }).ADDR).toBe(ok);
    }
    for (const bad of ['auth', 'http://auth:50051', '127.0.0.1:50052,', 'a b:1', 'dns://127.0.0.1:53/rundown']) {
      expect(() => loadConfig(address, { ADDR: bad }), bad).toThrow(ConfigError);
    }
  });
});
