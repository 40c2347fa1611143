// The whole start-up, in order: ports, data folder, PostgreSQL, Redis, secrets, migrations,
// services, readiness, demo team, banner; and the orderly way down on Ctrl-C / SIGTERM.
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { ensureDemo, type Demo } from './demo.js';
import { grpcHealth, httpReady, listening, waitForReady, type ReadinessTarget } from './health.js';
import { ensurePostgres, ensureRedis, type Endpoint } from './infra.js';
import { loadSecrets } from './secrets.js';
import {
  addresses,
  adminUrl,
  grpcPort,
  HOST,
  publicUrl,
  resolvePorts,
  SERVICES,
  serviceEnv,
  type Ports,
  type ServiceContext,
} from './services.js';
import { ensureBuilt } from './build.js';
import { migrationsModuleOf, planMigrations } from './migrations.js';
import { checkEntryPoints, runMigrations, startServices, type GiveUp, type ProcessSpec } from './supervise.js';
import {
  Cleanup,
  dataDirOf,
  indent,
  LauncherError,
  log,
  logError,
  paint,
  portFree,
  runModeOf,
  serviceCommand,
  redactUrl,
  REPO_ROOT,
  whenOutputCloses,
  writeLine,
} from './util.js';

export interface LaunchOptions {
  demo: boolean;
  /** `npm run dev`: services from the TypeScript sources, restarted when a file changes. */
  watch?: boolean;
  banner: boolean;
  readyTimeoutMs: number;
}

const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

export async function launch(options: LaunchOptions): Promise<void> {
  const env = process.env;
  const cleanup = new Cleanup();
  const aborted = new AbortController();
  let stopping = false;
  // The start-up step under way (e.g. pg_ctl start): shutdown lets it finish, so that whatever it
  // started is registered for cleanup instead of being left running.
  let inFlight: Promise<unknown> = Promise.resolve();
  const step = <T>(promise: Promise<T>): Promise<T> => {
    inFlight = promise.catch(() => undefined);
    return promise;
  };

  let shuttingDown: Promise<never> | undefined;
  // Idempotent: a signal, a failure and an output error may all ask at once; the first one wins.
  const shutdown = (code: number, reason: string): Promise<never> =>
    (shuttingDown ??= (async () => {
      stopping = true;
      aborted.abort();
      log(`stopping (${reason})`);
      await inFlight;
      await cleanup.run();
      log('stopped');
      process.exit(code);
    })());
  const fail = async (error: unknown, reason = 'start-up failed'): Promise<never> => {
    if (error instanceof LauncherError) logError(error.message, error.details);
    else logError(error instanceof Error ? (error.stack ?? error.message) : String(error));
    return shutdown(1, reason);
  };

  for (const signal of STOP_SIGNALS) {
    process.on(signal, () => {
      // npm forwards the terminal's Ctrl-C too, so a second signal usually means nothing new.
      if (stopping) return;
      void shutdown(0, `${signal} received`);
    });
  }
  // Started by a test or a bench (LAUNCHER_PARENT_PID, startSystem): a parent that dies without
  // stopping it (killed, or timed out past its own cleanup) takes the system down with it.
  const parentPid = Number(env.LAUNCHER_PARENT_PID);
  if (Number.isInteger(parentPid) && parentPid > 0) {
    setInterval(() => {
      if (!stopping && process.ppid !== parentPid) void shutdown(0, `parent process ${parentPid} gone`);
    }, 1_000).unref();
  }
  whenOutputCloses((error) => void shutdown(0, `output closed (${error.message})`));
  process.on('uncaughtException', (error) => void fail(error, 'launcher error'));
  process.on('unhandledRejection', (error) => void fail(error, 'launcher error'));

  try {
    // 1. Ports first: the cheapest check, and the most common surprise.
    const { ports, settings } = resolvePorts(env);
    for (const setting of settings) {
      if (!(await portFree(setting.port, HOST))) {
        throw new LauncherError(
          `port ${setting.port} (${setting.what}) is already in use on ${HOST}; stop what holds it or set ${setting.envVar}=<another port>`,
        );
      }
    }

    // Compiled (what the image runs) unless LAUNCH_MODE=source; built first when a source is newer.
    const mode = options.watch ? 'source' : runModeOf(env);
    if (mode === 'compiled') await step(ensureBuilt());
    if (stopping) return;
    // LAUNCH_NODE_ARGS: extra node flags for every service (e.g. `--cpu-prof`, not allowed in NODE_OPTIONS).
    const extraArgs = (env.LAUNCH_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
    const commands = SERVICES.map((service) => {
      const command = serviceCommand(service.name, mode, { watch: options.watch === true });
      return { ...command, args: [...extraArgs, ...command.args] };
    });
    checkEntryPoints(commands.map((command) => command.entry));

    // 2. Data folder, databases, secrets.
    const dataDir = dataDirOf(env);
    await mkdir(dataDir, { recursive: true });
    const postgres = await step(ensurePostgres({ dataDir, env, cleanup }));
    if (stopping) return;
    log(`PostgreSQL: ${redactUrl(postgres.url)} (${describe(postgres)})`);
    const redis = await step(ensureRedis({ dataDir, env, cleanup }));
    if (stopping) return;
    log(`Redis: ${redactUrl(redis.url)} (${describe(redis)})`);
    const { secrets, file: secretsFile, generated } = await loadSecrets(dataDir, env);
    if (generated.length > 0) log(`generated ${generated.join(', ')} into ${secretsFile}`);

    const ctx: ServiceContext = { env, databaseUrl: postgres.url, redisUrl: redis.url, secrets, ports };
    const specs: ProcessSpec[] = SERVICES.map((service, i) => ({
      name: service.name,
      entry: commands[i]!.entry,
      nodeArgs: commands[i]!.args,
      env: serviceEnv(service, ctx),
      color: service.color,
    }));

    // 3. Migrations, all at once (each service migrates only its own schema), for the services with
    // a migration their schema does not record yet: the others are not started for nothing.
    const migratable = SERVICES.flatMap((service, i) => (service.migrate && specs[i] ? [specs[i]] : []));
    const plan = await step(
      planMigrations(
        postgres.url,
        migratable.map((spec) => ({ name: spec.name, module: migrationsModuleOf(path.join(REPO_ROOT, spec.entry)) })),
      ),
    );
    if (stopping) return;
    if (plan.current.length > 0) log(`migrations already applied: ${plan.current.join(', ')}`);
    for (const { name, why } of plan.needed) log(`migrating ${name} (${why})`);
    await runMigrations(
      migratable.filter((spec) => plan.needed.some((needed) => needed.name === spec.name)),
      aborted.signal,
    );
    if (stopping) return;

    // 4. Services, supervised; stopping them is the last cleanup registered, so it runs first.
    const running = startServices(specs);
    cleanup.add('services', () => running.stop());
    const gaveUp = running.gaveUp.then((g) => {
      throw giveUpError(g);
    });

    // 5. Readiness: gRPC health for the gRPC services, /readyz for the gateway, each asked once its
    // port accepts connections.
    const targets: ReadinessTarget[] = SERVICES.map((service) => ({
      name: service.name,
      probe:
        service.ready === 'http'
          ? async () => (await listening(HOST, ports.http)) ?? httpReady(`${publicUrl(ports)}/readyz`)
          : async () => (await listening(HOST, grpcPort(ports, service.name))) ?? grpcHealth(`${HOST}:${grpcPort(ports, service.name)}`),
    }));
    const explain = (name: string): string =>
      `  last output of ${name}:\n${indent(running.lastOutput(name) || '(nothing yet)', '    ')}`;
    await Promise.race([waitForReady(targets, options.readyTimeoutMs, explain), gaveUp]);
    if (stopping) return;

    // 6. Demo team.
    let demo: Demo | undefined;
    if (options.demo) {
      const result = await ensureDemo({
        dataDir,
        adminUrl: adminUrl(ports),
        adminSecret: secrets.ADMIN_SECRET,
        v1Url: `${publicUrl(ports)}/v1`,
      });
      if (result.reused) log(`reusing the demo team ${result.teamId} and its token`);
      demo = result;
    }

    // 7. Tell the human, then the machines.
    const readyMs = Math.round(performance.now());
    log(paint.green(`ready in ${readyMs} ms`));
    const adminSecretFrom = env.ADMIN_SECRET ? 'the ADMIN_SECRET environment variable' : secretsFile;
    if (options.banner) printBanner({ ports, dataDir, postgres, redis, demo, adminSecretFrom });
    const machine = {
      http_port: ports.http,
      admin_port: ports.admin,
      grpc_ports: ports.grpc,
      metrics_ports: ports.metrics,
      addresses: addresses(ports),
      internal_context_keys: secrets.INTERNAL_CONTEXT_KEYS,
      public_url: publicUrl(ports),
      base_url: `${publicUrl(ports)}/v1`,
      admin_url: adminUrl(ports),
      database_url: postgres.url,
      redis_url: redis.url,
      admin_secret: secrets.ADMIN_SECRET,
      v0_token_secret: secrets.V0_TOKEN_SECRET,
      demo_token: demo?.token ?? null,
      demo_team_id: demo?.teamId ?? null,
      data_dir: dataDir,
      ready_ms: readyMs,
      pid: process.pid,
    };
    writeLine(`LAUNCHER_READY ${JSON.stringify(machine)}`);

    // 8. From now on, a service that exhausts its restarts takes the whole system down, loudly.
    void gaveUp.catch((error: unknown) => {
      if (!stopping) void fail(error, 'a service gave up');
    });
  } catch (error) {
    if (stopping) return; // a signal arrived mid-start-up; shutdown is already under way
    await fail(error);
  }
}

function giveUpError(g: GiveUp): LauncherError {
  const why =
    g.exitCode === 0
      ? 'exited (code 0) although nothing asked it to'
      : g.exitCode === 78
        ? 'rejected its configuration (exit 78)'
        : `keeps crashing (last exit: ${g.exitCode})`;
  return new LauncherError(`${g.name} ${why}; giving up. Its last output:`, g.output || '(nothing)');
}

function describe(endpoint: Endpoint): string {
  switch (endpoint.source) {
    case 'env':
      return 'from the environment';
    case 'local':
      return 'already running locally';
    case 'private':
      return 'private, started by the launcher';
  }
}

function printBanner(info: {
  ports: Ports;
  dataDir: string;
  postgres: Endpoint;
  redis: Endpoint;
  demo: Demo | undefined;
  adminSecretFrom: string;
}): void {
  const base = publicUrl(info.ports);
  const v1 = `${base}/v1`;
  const row = (label: string, value: string): string => `  ${label.padEnd(11)} ${value}`;
  const lines = [
    '',
    paint.bold('Rundown is running.'),
    row('v1 API', paint.cyan(v1)),
    row('OpenAPI', `${v1}/openapi.json`),
    row('docs', `${base}/docs`),
    row('MCP', `${base}/mcp   (for AI agents, the v1 token: docs/mcp.md)`),
    row('admin', `${adminUrl(info.ports)}   (Authorization: Bearer <ADMIN_SECRET>, see ${info.adminSecretFrom})`),
    row('data', info.dataDir),
    row('PostgreSQL', `${redactUrl(info.postgres.url)}   (${describe(info.postgres)})`),
    row('Redis', `${redactUrl(info.redis.url)}   (${describe(info.redis)})`),
  ];
  if (info.demo !== undefined) {
    lines.push(
      row('demo team', `${info.demo.teamId}   (OWNER token valid until ${new Date(info.demo.expiresAt).toISOString()})`),
      '',
      '  Try it:',
      indent(
        [
          `export TOKEN=${info.demo.token}`,
          `curl -s -X POST ${v1}/rundowns -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -d '{"title":"My first show"}'`,
          `curl -s ${v1}/rundowns -H "Authorization: Bearer $TOKEN"`,
        ].join('\n'),
      ),
    );
  }
  lines.push('', paint.dim('  Ctrl-C stops everything.'), '');
  writeLine(lines.join('\n'));
}

