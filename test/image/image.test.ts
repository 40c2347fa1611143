import { readFileSync } from 'node:fs';
import { describe, expect, inject, it } from 'vitest';
import { SERVICES } from '@rundown/shared';
import { query } from '../support/db.js';
import { podman } from './system.js';

// The image as it runs: every service non-root on a read-only root filesystem (/tmp the only
// writable path), production dependencies only, each service's schema made by the image's own
// `migrate` command.

const run = () => inject('imageRun');

async function inspect(target: string, format: string): Promise<string> {
  const result = await podman(['inspect', '--format', format, target]);
  expect(result.code, result.stderr).toBe(0);
  return result.stdout.trim();
}

/** Runs node inside a running container (as the container's own user). */
async function nodeIn(container: string, script: string): Promise<string> {
  const result = await podman(['exec', container, 'node', '-e', script]);
  expect(result.code, result.stderr).toBe(0);
  return result.stdout.trim();
}

describe('the image', () => {
  it('runs one container per service, each as uid/gid 1000, with every capability dropped', async () => {
    const { image, containers } = run();
    expect(await inspect(image, '{{.Config.User}}')).toBe('1000:1000');
    // One per row of the services table, and the gateway.
    expect(Object.keys(containers).sort()).toEqual([...SERVICES.map((row) => row.name), 'gateway'].sort());
    for (const name of Object.values(containers)) {
      expect(await inspect(name, '{{.State.Status}}')).toBe('running');
      // The service process as the host kernel sees it: real, effective, saved and fs ids.
      const pid = Number(await inspect(name, '{{.State.Pid}}'));
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      expect(status.match(/^Uid:\s+(.*)$/m)?.[1]?.split(/\s+/), name).toEqual(['1000', '1000', '1000', '1000']);
      expect(status.match(/^Gid:\s+(.*)$/m)?.[1]?.split(/\s+/), name).toEqual(['1000', '1000', '1000', '1000']);
      expect(status.match(/^CapEff:\s+(.*)$/m)?.[1], name).toBe('0000000000000000');
      expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0], name).toBe('node');
    }
  });

  it('serves from a read-only root filesystem: only /tmp is writable', async () => {
    const { containers } = run();
    const gateway = containers.gateway!;
    expect(await inspect(gateway, '{{.HostConfig.ReadonlyRootfs}}')).toBe('true');
    const attempt = `const fs = require('node:fs');
      const tryWrite = (file) => { try { fs.writeFileSync(file, 'x'); fs.unlinkSync(file); return 'ok'; } catch (e) { return e.code; } };
      console.log(JSON.stringify(['/probe', '/app/probe', '/var/tmp/probe', '/run/probe', '/tmp/probe'].map(tryWrite)));`;
    expect(JSON.parse(await nodeIn(gateway, attempt))).toEqual(['EROFS', 'EROFS', 'EROFS', 'EROFS', 'ok']);
  });

  it('holds production dependencies only (none of the lockfile\'s dev-only packages)', async () => {
    const { image } = run();
    // Outside any running system: the image's own lockfile against its own node_modules.
    const check = `const fs = require('node:fs');
      const lock = JSON.parse(fs.readFileSync('/app/package-lock.json', 'utf8'));
      const installed = (p) => p.includes('node_modules/') && fs.existsSync('/app/' + p);
      const entries = Object.entries(lock.packages);
      console.log(JSON.stringify({
        dev: entries.filter(([p, e]) => e.dev === true && installed(p)).map(([p]) => p),
        devInLock: entries.filter(([p, e]) => e.dev === true).length,
        production: entries.filter(([p, e]) => !e.dev && !e.optional && !e.devOptional && p.startsWith('node_modules/') && !e.link && installed(p)).length,
        missing: entries.filter(([p, e]) => !e.dev && !e.optional && !e.devOptional && p.startsWith('node_modules/') && !e.link && !installed(p)).map(([p]) => p),
      }));`;
    const result = await podman(['run', '--rm', '--network', 'none', '--read-only', '--entrypoint', 'node', image, '-e', check]);
    expect(result.code, result.stderr).toBe(0);
    const found = JSON.parse(result.stdout) as { dev: string[]; devInLock: number; production: number; missing: string[] };
    expect(found.devInLock).toBeGreaterThan(100); // vitest, typescript, eslint, ... are in the lock
    expect(found.dev).toEqual([]);
    expect(found.missing).toEqual([]);
    expect(found.production).toBeGreaterThan(50);
    // No compiler, no test runner, no TypeScript sources' tooling in the runtime.
    const tools = await podman(['run', '--rm', '--network', 'none', '--entrypoint', 'node', image, '-e', "console.log(['typescript','vitest','tsx','eslint'].filter((m) => require('node:fs').existsSync('/app/node_modules/' + m)).join(','))"]);
    expect(tools.stdout.trim()).toBe('');
  });

  it('made every service schema with its own migrate command', async () => {
    const withSchemas = SERVICES.filter((row) => row.migrations);
    expect(withSchemas.length).toBeGreaterThan(3);
    const expected: Record<string, { name: string }[]> = {};
    for (const row of withSchemas) {
      const module = new URL(`../../services/${row.name}/src/migrations/index.ts`, import.meta.url).href;
      expected[row.name] = ((await import(/* @vite-ignore */ module)) as { migrations: { name: string }[] }).migrations;
    }
    for (const [schema, classes] of Object.entries(expected)) {
      const applied = await query<{ name: string }>(`SELECT name FROM "${schema}".migrations ORDER BY id`);
      expect(applied.map((row) => row.name), schema).toEqual(classes.map((c) => c.name));
    }
  });
});
