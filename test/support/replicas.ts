import { spawn, type ChildProcess } from 'node:child_process';
import { addressVariable, adminAddressVariable } from '@rundown/shared';
import { freePort } from '../../scripts/launcher/child.js';
import { grpcHealth, httpReady } from '../../scripts/launcher/health.js';
import { loadSecrets, type Secrets } from '../../scripts/launcher/secrets.js';
import { HOST, SERVICES, serviceEnv, type Ports, type ServiceSpec } from '../../scripts/launcher/services.js';
import { runMigrations } from '../../scripts/launcher/supervise.js';
import { REPO_ROOT, serviceCommand } from '../../scripts/launcher/util.js';

/**
 * A system of N replicas of every service (the gateway included), started by hand from the
 * compiled entry points as the image runs them, without the launcher's supervisor (which would
 * restart a process that exits): what a Kubernetes Deployment with `replicas: N` gives. Every
 * process reaches every replica of each service it calls (`<NAME>_ADDR` lists them all, gRPC
 * round_robin), and the gateways proxy Socket.IO to every realtime replica.
 */
export interface Replica {
  service: string;
  index: number;
  ports: Ports;
  child: ChildProcess;
  /** The last lines it printed. */
  output: string[];
  /** When it exited (performance.now()), with its code. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  /** The HTTP base URL of a gateway (`http://127.0.0.1:<port>`). */
  url: string;
  adminUrl: string;
}

export interface ReplicatedSystem {
  replicas: Replica[];
  secrets: Secrets;
  of(service: string, index: number): Replica;
  stop(): Promise<void>;
}

async function replicaPorts(): Promise<Ports> {
  const grpc: Record<string, number> = {};
  const adminGrpc: Record<string, number> = {};
  const serviceHttp: Record<string, number> = {};
  const metrics: Record<string, number> = {};
  for (const spec of SERVICES) {
    grpc[spec.name] = await freePort();
    metrics[spec.name] = await freePort();
    if (spec.adminGrpcPortEnv) adminGrpc[spec.name] = await freePort();
    if (spec.httpPortEnv) serviceHttp[spec.name] = await freePort();
  }
  return { http: await freePort(), admin: await freePort(), grpc, adminGrpc, serviceHttp, metrics };
}

function entryOf(spec: ServiceSpec): string {
  return serviceCommand(spec.name, 'compiled').entry;
}

export async function startReplicated(options: {
  count: number;
  databaseUrl: string;
  redisUrl: string;
  dataDir: string;
  env: Record<string, string>;
}): Promise<ReplicatedSystem> {
  const { secrets } = await loadSecrets(options.dataDir, {});
  const ports = await Promise.all(Array.from({ length: options.count }, () => replicaPorts()));
  // Every replica of each service, by address.
  const lists: Record<string, string> = {};
  for (const spec of SERVICES) {
    lists[addressVariable(spec.name)] = ports.map((p) => `${HOST}:${p.grpc[spec.name]}`).join(',');
    if (spec.adminGrpcPortEnv) lists[adminAddressVariable(spec.name)] = ports.map((p) => `${HOST}:${p.adminGrpc[spec.name]}`).join(',');
  }
  const realtimeUrls = ports.map((p, i) => `rt-${i}=http://${HOST}:${p.serviceHttp.realtime}`).join(',');
  const envOf = (spec: ServiceSpec, index: number): Record<string, string> => {
    const ctx = { env: {}, databaseUrl: options.databaseUrl, redisUrl: options.redisUrl, secrets, ports: ports[index]! };
    return {
      ...serviceEnv(spec, ctx),
      ...lists,
      ...(spec.name === 'realtime' ? { NODE_ID: `rt-${index}` } : {}),
      ...(spec.name === 'gateway' ? { REALTIME_URLS: realtimeUrls, ADMIN_SECRET: secrets.ADMIN_SECRET } : {}),
      ...options.env,
    };
  };

  // Migrations once (each service its own schema), as the chart's Job does.
  await runMigrations(
    SERVICES.filter((s) => s.migrate).map((s) => ({ name: s.name, entry: entryOf(s), nodeArgs: [], env: envOf(s, 0), color: 'gray' })),
    new AbortController().signal,
  );

  const replicas: Replica[] = [];
  const start = (spec: ServiceSpec, index: number): Replica => {
    const child = spawn(process.execPath, [entryOf(spec)], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...envOf(spec, index) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output: string[] = [];
    const keep = (chunk: Buffer) => {
      output.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      if (output.length > 200) output.splice(0, output.length - 200);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal, at: performance.now() })),
    );
    const p = ports[index]!;
    return { service: spec.name, index, ports: p, child, output, exited, url: `http://${HOST}:${p.http}`, adminUrl: `http://${HOST}:${p.admin}/admin` };
  };
  for (const spec of SERVICES) for (let i = 0; i < options.count; i++) replicas.push(start(spec, i));

  const system: ReplicatedSystem = {
    replicas,
    secrets,
    of: (service, index) => {
      const found = replicas.find((r) => r.service === service && r.index === index);
      if (!found) throw new Error(`no replica ${index} of ${service}`);
      return found;
    },
    stop: async () => {
      for (const r of replicas) if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill('SIGTERM');
      await Promise.race([Promise.all(replicas.map((r) => r.exited)), new Promise((resolve) => setTimeout(resolve, 20_000))]);
      for (const r of replicas) if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill('SIGKILL');
    },
  };

  // Ready: gRPC health of every backend replica, /readyz of every gateway.
  const deadline = Date.now() + 420_000; // a shared, loaded machine: a dozen processes start at once
  for (const r of replicas) {
    for (;;) {
      const problem =
        r.service === 'gateway' ? await httpReady(`${r.url}/readyz`) : await grpcHealth(`${HOST}:${r.ports.grpc[r.service]}`);
      if (problem === undefined) break;
      if (r.child.exitCode !== null || Date.now() > deadline) {
        await system.stop();
        throw new Error(`${r.service}#${r.index} not ready (${problem}):\n${r.output.slice(-30).join('\n')}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  return system;
}
