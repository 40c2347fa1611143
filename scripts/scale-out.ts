// `npm run start:replicas -- --replicas 2`: the whole system with N replicas of every service, shaped
// as the cluster runs it (scripts/launcher/replicas.ts): each replica on its own loopback address,
// internal gRPC through one DNS name per service, the gateways behind a local balancer. The way to
// see and reproduce what only happens with several replicas. Commands on stdin: list, add <service>,
// remove <service>, roll <service>|all.
import { mkdir } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { ensureBuilt } from './launcher/build.js';
import { ensureDemo } from './launcher/demo.js';
import { ensurePostgres, ensureRedis } from './launcher/infra.js';
import { ScaleOut, type Replica } from './launcher/replicas.js';
import { loadSecrets } from './launcher/secrets.js';
import { resolvePorts, SERVICES } from './launcher/services.js';
import { Cleanup, dataDirOf, LauncherError, log, logError, paint, redactUrl, runModeOf, writeLine } from './launcher/util.js';

const usage = `Usage: npm run start:replicas -- [options]

N replicas of every service, each on its own loopback address (127.0.0.2, 127.0.0.3, ...), calling
each other through one DNS name per service (<service>.replicas.test, answered by a DNS server on
127.0.0.1 with the addresses of the ready replicas, as a headless Service's name is), the gateways
behind a balancer on 127.0.0.1:HTTP_PORT (admin: ADMIN_PORT). PostgreSQL, Redis, secrets and ports
as \`npm start\` takes them.

Options:
  --replicas <n>      replicas of every service (default 2)
  --no-demo           do not create/reuse the demo team
  -h, --help          show this help

Then, on stdin: list | add <service> | remove <service> | roll <service>|all  (roll: each replica in
turn stopped, then a new one started and ready, as a rolling update does)`;

const { values } = (() => {
  try {
    return parseArgs({
      options: {
        replicas: { type: 'string', default: '2' },
        'no-demo': { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
    });
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${usage}\n`);
    process.exit(2);
  }
})();
if (values.help) {
  process.stdout.write(`${usage}\n`);
  process.exit(0);
}

const env = process.env;
const cleanup = new Cleanup();
let system: ScaleOut | undefined;
let stopping = false;
const stop = async (code: number) => {
  if (stopping) return;
  stopping = true;
  log('stopping');
  await system?.stop();
  await cleanup.run();
  process.exit(code);
};
process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));

const describe = (r: Replica) => `${r.name.padEnd(11)} ${r.address.padEnd(12)} pid ${String(r.child.pid).padEnd(8)} ${r.state}`;

try {
  const { ports } = resolvePorts(env);
  const mode = runModeOf(env);
  if (mode === 'compiled') await ensureBuilt();
  const dataDir = dataDirOf(env);
  await mkdir(dataDir, { recursive: true });
  const postgres = await ensurePostgres({ dataDir, env, cleanup });
  const redis = await ensureRedis({ dataDir, env, cleanup });
  const { secrets } = await loadSecrets(dataDir, env);
  const replicas = Number(values.replicas);
  log(`starting ${replicas} replicas of ${SERVICES.map((s) => s.name).join(', ')} (PostgreSQL ${redactUrl(postgres.url)}, Redis ${redactUrl(redis.url)})`);
  system = await ScaleOut.start({
    replicas,
    databaseUrl: postgres.url,
    redisUrl: redis.url,
    secrets,
    ports,
    mode,
    env: { LOG_LEVEL: env.LOG_LEVEL ?? 'info' },
    onOutput: (replica, line) => writeLine(`${paint.dim(`[${replica.name}]`)} ${line}`),
  });
  const demo = values['no-demo'] || env.DEMO === '0' ? undefined : await ensureDemo({ dataDir, adminUrl: system.adminUrl, adminSecret: secrets.ADMIN_SECRET, v1Url: `${system.publicUrl}/v1` });
  writeLine(
    [
      '',
      paint.bold(`Rundown is running, ${replicas} replicas of every service.`),
      `  v1 API      ${paint.cyan(`${system.publicUrl}/v1`)}   (a balancer over the gateways; /api-v0/socket.io to the realtime replicas)`,
      `  admin       ${system.adminUrl}`,
      `  DNS         ${system.dns.host}:${system.dns.port}, e.g. dig @${system.dns.host} -p ${system.dns.port} rundown.replicas.test`,
      ...(demo ? [`  demo token  ${demo.token}`] : []),
      '',
      ...system.live().map((r) => `  ${describe(r)}   metrics ${r.metricsUrl}`),
      '',
      paint.dim('  Commands: list | add <service> | remove <service> | roll <service>|all.  Ctrl-C stops everything.'),
      '',
    ].join('\n'),
  );
  const running = system;
  createInterface({ input: process.stdin }).on('line', (line) => {
    const [command, target] = line.trim().split(/\s+/);
    const act = async () => {
      if (command === 'list') for (const r of running.live()) writeLine(`  ${describe(r)}`);
      else if (command === 'add' && target) writeLine(`  added ${describe(await running.add(target))}`);
      else if (command === 'remove' && target) {
        const victim = running.live(target)[0];
        if (!victim) throw new LauncherError(`no running replica of ${target}`);
        const exit = await running.remove(victim);
        writeLine(`  ${victim.name} exited (code ${exit.code})`);
      } else if (command === 'roll' && target) {
        for (const service of target === 'all' ? SERVICES.map((s) => s.name) : [target]) {
          for (const replica of running.live(service)) {
            const { exit, next } = await running.replace(replica);
            writeLine(`  ${replica.name} exited (code ${exit.code}); ${next.name} ready on ${next.address}`);
          }
        }
      } else if (command) writeLine('  commands: list | add <service> | remove <service> | roll <service>|all');
    };
    act().catch((error: unknown) => logError((error as Error).message));
  });
} catch (error) {
  if (error instanceof LauncherError) logError(error.message, error.details);
  else logError(error instanceof Error ? (error.stack ?? error.message) : String(error));
  await stop(1);
}
