// The local scale-out: N replicas of every service on one machine, shaped as the chart deploys them.
//
// - Each replica is a process on its own loopback address (127.0.0.2, 127.0.0.3, ...: all of 127/8
//   is loopback on Linux), with the same ports as its siblings, as each pod has its own IP. A
//   replaced replica comes back on a new address, as a new pod does.
// - Internal gRPC goes through one name per service, `<service>.replicas.test`, that a DNS server on
//   loopback (local-dns.ts) answers with the addresses of that service's ready replicas, as the
//   cluster DNS answers a headless Service's name. Every `<NAME>_ADDR` is `dns://<that server>/<name>:<port>`
//   (GRPC_NODE_USE_ALTERNATIVE_RESOLVER=true: grpc-js asks that server rather than the machine's
//   resolver), so the services' channels resolve, spread (round_robin), re-resolve and age their
//   connections exactly as in the cluster.
// - The gateways sit behind a balancer on 127.0.0.1 (balancer.ts: the ingress), which also sends the
//   v0 push channel to the realtime replicas, each session to its own.
// - A replica is published (DNS, balancer) once ready, and withdrawn the moment it is asked to stop,
//   before SIGTERM reaches it (endpoints drop a terminating pod at once).
import { spawn, type ChildProcess } from 'node:child_process';
import { addressVariable, adminAddressVariable } from '@rundown/shared';
import { Pool, startBalancer } from './balancer.js';
import { grpcHealth, httpReady } from './health.js';
import { LocalDns } from './local-dns.js';
import type { Secrets } from './secrets.js';
import { HOST, SERVICES, serviceEnv, type Ports, type ServiceSpec } from './services.js';
import { runMigrations } from './supervise.js';
import { LauncherError, REPO_ROOT, serviceCommand, sleep, type RunMode } from './util.js';

/** The DNS zone of the services' names (`.test` is reserved for this: RFC 6761). */
export const ZONE = 'replicas.test';

export interface ScaleOutOptions {
  /** Replicas of every service, the gateway included. */
  replicas: number;
  databaseUrl: string;
  redisUrl: string;
  secrets: Secrets;
  /** `http` and `admin`: the balancer's (on 127.0.0.1); the others: every replica's own, on its address. */
  ports: Ports;
  mode?: RunMode;
  /** Extra node flags for every service. */
  nodeArgs?: readonly string[];
  /** Extra environment for every service (e.g. SHUTDOWN_DELAY_MS, LOG_LEVEL). */
  env?: Record<string, string>;
  /** How long a stopping replica still gets new requests from the balancer (endpoint propagation). */
  lagMs?: number;
  /** Each line a replica prints. */
  onOutput?: (replica: Replica, line: string) => void;
  /** A replica exited without being asked to (a crash). */
  onCrash?: (replica: Replica, exit: Exit) => void;
  readyTimeoutMs?: number;
  /** The first address is 127.0.0.<firstAddress>; two scale-outs at once need distinct ranges or ports. */
  firstAddress?: number;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** performance.now() when it exited. */
  at: number;
}

export interface Replica {
  service: string;
  /** 1, 2, ... per service, never reused (a replaced replica gets the next). */
  serial: number;
  /** e.g. `auth-3`; also the realtime replica's NODE_ID. */
  name: string;
  address: string;
  child: ChildProcess;
  /** The last lines it printed. */
  output: string[];
  exited: Promise<Exit>;
  state: 'starting' | 'ready' | 'stopping' | 'gone';
  /** `GET <metricsUrl>`: its Prometheus metrics. */
  metricsUrl: string;
  /** Its own HTTP base (gateway: the public listener; realtime: Socket.IO), undefined for the others. */
  httpUrl: string | undefined;
}

export class ScaleOut {
  readonly replicas: Replica[] = [];
  private readonly serials = new Map<string, number>();
  private nextAddress: number;
  private closers: (() => Promise<void>)[] = [];

  private constructor(
    private readonly options: ScaleOutOptions,
    readonly dns: LocalDns,
    private readonly gateways: Pool,
    private readonly admins: Pool,
    private readonly sockets: Pool,
  ) {
    this.nextAddress = options.firstAddress ?? 2;
  }

  /** DNS server, balancers, migrations (once), then every replica of every service, all ready. */
  static async start(options: ScaleOutOptions): Promise<ScaleOut> {
    if (!Number.isInteger(options.replicas) || options.replicas < 1) throw new LauncherError(`--replicas must be a positive integer, not ${options.replicas}`);
    const dns = await LocalDns.start(HOST);
    const lag = options.lagMs ?? 0;
    const system = new ScaleOut(options, dns, new Pool(lag), new Pool(lag), new Pool(lag));
    system.closers.push(() => dns.close());
    try {
      const publicBalancer = await startBalancer({ host: HOST, port: options.ports.http, pool: system.gateways, sockets: system.sockets });
      system.closers.push(() => publicBalancer.close());
      const adminBalancer = await startBalancer({ host: HOST, port: options.ports.admin, pool: system.admins });
      system.closers.push(() => adminBalancer.close());
      const migrating = SERVICES.filter((s) => s.migrate);
      await runMigrations(
        migrating.map((spec) => ({ name: spec.name, entry: system.command(spec).entry, nodeArgs: system.command(spec).args, env: system.envOf(spec, HOST, spec.name), color: spec.color })),
        new AbortController().signal,
      );
      const starting: Promise<Replica>[] = [];
      for (const spec of SERVICES) for (let i = 0; i < options.replicas; i++) starting.push(system.add(spec.name));
      const results = await Promise.allSettled(starting);
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    } catch (error) {
      await system.stop();
      throw error;
    }
    return system;
  }

  get publicUrl(): string {
    return `http://${HOST}:${this.options.ports.http}`;
  }

  get adminUrl(): string {
    return `http://${HOST}:${this.options.ports.admin}/admin`;
  }

  /** The name a service's replicas answer to, and the gRPC target its callers use. */
  nameOf(service: string): string {
    return `${service}.${ZONE}`;
  }

  /** The replicas of a service (every service when none is named) that are running now. */
  live(service?: string): Replica[] {
    return this.replicas.filter((r) => (service === undefined || r.service === service) && (r.state === 'ready' || r.state === 'starting'));
  }

  /** Starts one more replica of `service` on a new address; resolves once it is ready and published. */
  async add(service: string): Promise<Replica> {
    const spec = SERVICES.find((s) => s.name === service);
    if (!spec) throw new LauncherError(`no service ${service}; one of ${SERVICES.map((s) => s.name).join(', ')}`);
    const serial = (this.serials.get(service) ?? 0) + 1;
    this.serials.set(service, serial);
    const address = this.allocateAddress();
    const name = `${service}-${serial}`;
    const { entry, args } = this.command(spec);
    const child = spawn(process.execPath, [...args, entry], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...this.envOf(spec, address, name) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output: string[] = [];
    const ports = this.options.ports;
    const httpPort = spec.name === 'gateway' ? ports.http : ports.serviceHttp[spec.name];
    const replica: Replica = {
      service,
      serial,
      name,
      address,
      child,
      output,
      exited: new Promise<Exit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal, at: performance.now() }))),
      state: 'starting',
      metricsUrl: `http://${address}:${ports.metrics[spec.name]}/metrics`,
      httpUrl: httpPort !== undefined ? `http://${address}:${httpPort}` : undefined,
    };
    let partial = '';
    const keep = (chunk: Buffer) => {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        if (line === '') continue;
        output.push(line);
        this.options.onOutput?.(replica, line);
      }
      if (output.length > 300) output.splice(0, output.length - 300);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    void replica.exited.then((exit) => {
      const crashed = replica.state !== 'stopping';
      replica.state = 'gone';
      void this.withdraw(replica);
      if (crashed) this.options.onCrash?.(replica, exit);
    });
    this.replicas.push(replica);
    await this.waitReady(replica);
    replica.state = 'ready';
    this.publish(replica);
    return replica;
  }

  /**
   * Stops a replica as Kubernetes stops a pod: withdrawn from the DNS name and the balancer first,
   * then SIGTERM; resolves when it has exited (SIGKILL after `killAfterMs`).
   */
  async remove(replica: Replica, killAfterMs = 60_000): Promise<Exit> {
    if (replica.state === 'gone') return replica.exited;
    replica.state = 'stopping';
    const withdrawn = this.withdraw(replica);
    replica.child.kill('SIGTERM');
    const killer = setTimeout(() => replica.child.kill('SIGKILL'), killAfterMs);
    const exit = await replica.exited;
    clearTimeout(killer);
    await withdrawn;
    return exit;
  }

  /** A rolling update's step: the replica stopped and gone, then a new one started and ready. */
  async replace(replica: Replica): Promise<{ exit: Exit; next: Replica }> {
    const exit = await this.remove(replica);
    return { exit, next: await this.add(replica.service) };
  }

  /** Every replica stopped (SIGTERM, SIGKILL after 20 s), then the balancers and the DNS server. */
  async stop(): Promise<void> {
    const running = this.replicas.filter((r) => r.state !== 'gone');
    await Promise.all(running.map((r) => this.remove(r, 20_000)));
    for (const close of this.closers.reverse()) await close().catch(() => undefined);
    this.closers = [];
  }

  /** Each live replica's metrics text. */
  async scrape(service: string): Promise<{ replica: Replica; text: string }[]> {
    return Promise.all(
      this.live(service).map(async (replica) => {
        // A busy machine may keep a scrape waiting: measuring must not be what fails.
        for (let attempt = 1; ; attempt++) {
          try {
            return { replica, text: await (await fetch(replica.metricsUrl, { signal: AbortSignal.timeout(15_000) })).text() };
          } catch (error) {
            if (attempt < 3) continue;
            const why = String((error as Error).cause ?? error);
            throw new LauncherError(`${replica.name} (${replica.state}) answered no metrics at ${replica.metricsUrl}: ${why}`, replica.output.slice(-30).join('\n'));
          }
        }
      }),
    );
  }

  private allocateAddress(): string {
    const n = this.nextAddress++;
    if (n > 65_000) throw new LauncherError('out of loopback addresses');
    // 127.0.x.y counted from 127.0.0.1, skipping .0 and .255 of every /24 (harmless on lo, confusing to read).
    const third = Math.floor((n - 1) / 254);
    const fourth = ((n - 1) % 254) + 1;
    return `127.0.${third}.${fourth}`;
  }

  private command(spec: ServiceSpec): { entry: string; args: string[] } {
    const { entry, args } = serviceCommand(spec.name, this.options.mode ?? 'compiled');
    return { entry, args: [...(this.options.nodeArgs ?? []), ...args] };
  }

  /** A replica's environment: the launcher's, with every address a DNS name and every listener on its own address. */
  private envOf(spec: ServiceSpec, address: string, name: string): Record<string, string> {
    const ports = this.options.ports;
    const ctx = { env: {}, databaseUrl: this.options.databaseUrl, redisUrl: this.options.redisUrl, secrets: this.options.secrets, ports };
    const env: Record<string, string> = { ...serviceEnv(spec, ctx) };
    for (const other of SERVICES) {
      if (other.name === 'gateway') continue;
      env[addressVariable(other.name)] = this.dns.target(this.nameOf(other.name), ports.grpc[other.name]!);
      const adminPort = ports.adminGrpc[other.name];
      if (adminPort !== undefined) env[adminAddressVariable(other.name)] = this.dns.target(this.nameOf(other.name), adminPort);
    }
    env.GRPC_NODE_USE_ALTERNATIVE_RESOLVER = 'true';
    env.GRPC_HOST = address;
    env.METRICS_HOST = address;
    if (env.HOST !== undefined) env.HOST = address;
    if (spec.name === 'gateway') {
      env.ADMIN_HOST = address;
      env.ADMIN_SECRET = this.options.secrets.ADMIN_SECRET;
      // The balancer routes the v0 push channel to the realtime replicas, as the chart's ingress does.
      delete env.REALTIME_URLS;
    }
    if (spec.name === 'realtime') env.NODE_ID = name;
    return { ...env, ...this.options.env };
  }

  private async waitReady(replica: Replica): Promise<void> {
    const deadline = Date.now() + (this.options.readyTimeoutMs ?? 240_000);
    const probe =
      replica.service === 'gateway'
        ? () => httpReady(`${replica.httpUrl}/readyz`)
        : () => grpcHealth(`${replica.address}:${this.options.ports.grpc[replica.service]}`);
    for (;;) {
      const problem = await probe();
      if (problem === undefined) return;
      if (replica.child.exitCode !== null || replica.child.signalCode !== null || Date.now() > deadline) {
        if (replica.state !== 'gone') replica.child.kill('SIGKILL');
        throw new LauncherError(`${replica.name} (${replica.address}) did not get ready: ${problem}`, replica.output.slice(-40).join('\n'));
      }
      await sleep(100);
    }
  }

  private publish(replica: Replica): void {
    this.dns.add(this.nameOf(replica.service), replica.address);
    if (replica.service === 'gateway') {
      this.gateways.add({ id: replica.name, url: replica.httpUrl! });
      this.admins.add({ id: replica.name, url: `http://${replica.address}:${this.options.ports.admin}` });
    }
    if (replica.service === 'realtime') this.sockets.add({ id: replica.name, url: replica.httpUrl! });
  }

  private withdraw(replica: Replica): Promise<void> {
    this.dns.remove(this.nameOf(replica.service), replica.address);
    return Promise.all([this.gateways.remove(replica.name), this.admins.remove(replica.name), this.sockets.remove(replica.name)]).then(() => undefined);
  }
}
