import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { internalServiceConfig, retrySafeMethods, SERVICE_MODULES } from './retry-policy.js';

const generated = join(import.meta.dirname, '../generated');

function generatedFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? generatedFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

describe('the retry policy of internal calls', () => {
  it('knows every generated module that declares a service', () => {
    const declaring = generatedFiles(generated)
      .filter((file) => /export const \w+ServiceDefinition = \{/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(generated, file).replace(/\.ts$/, ''))
      .sort();
    expect(Object.keys(SERVICE_MODULES).sort()).toEqual(declaring);
  });

  it('retries the reads and the idempotent writes the protos name, and no other write', () => {
    const names = retrySafeMethods().map((m) => `${m.service}/${m.method}`);
    expect(names).toContain('rundown.runner.v1.RunnerService/GetStatus');
    expect(names).toContain('rundown.rundown.v1.PlayableOrderService/GetPlayableOrder');
    expect(names).toContain('rundown.cells.v1.RundownCellsService/DeleteCueCells');
    for (const write of ['rundown.rundown.v1.CueService/CreateCue', 'rundown.runner.v1.RunnerService/Act', 'rundown.cells.v1.CellService/WriteCells']) {
      expect(names).not.toContain(write);
    }
  });

  it('is a service config grpc-js accepts: round_robin, UNAVAILABLE retried at most 4 times, throttled', async () => {
    const { validateServiceConfig } = await import('@grpc/grpc-js/build/src/service-config.js');
    const config = validateServiceConfig(JSON.parse(internalServiceConfig()));
    expect(config.loadBalancingConfig).toEqual([{ round_robin: {} }]);
    expect(config.methodConfig[0]?.retryPolicy).toMatchObject({ maxAttempts: 4, retryableStatusCodes: ['UNAVAILABLE'] });
    expect(config.retryThrottling).toEqual({ maxTokens: 10, tokenRatio: 0.1 });
  });
});
