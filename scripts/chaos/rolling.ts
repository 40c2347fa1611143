// A rolling restart under load (`npm run chaos -- --rolling`, and test/e2e/rolling-restart.test.ts):
// N replicas of every service in the local scale-out (scripts/launcher/replicas.ts: own loopback
// addresses, internal gRPC through DNS names, gateways behind a balancer), the steady mixed load of
// load.ts, then every replica of every service replaced one at a time, gateway included: withdrawn
// and SIGTERM, gone, a new one started (on a new address) and ready. Then the load stops and every
// write, timer and live client is checked. Per-replica call counts from each replica's metrics, over
// a steady window before and after the roll, show how calls spread.
import { SERVICES } from '../launcher/services.js';
import type { Ports } from '../launcher/services.js';
import { ScaleOut, type Replica } from '../launcher/replicas.js';
import type { Secrets } from '../launcher/secrets.js';
import { sleep } from '../launcher/util.js';
import { MixedLoad, type ActionLog, type Sample, type Verification } from './load.js';

export interface RollingOptions {
  databaseUrl: string;
  /** A Redis database of its own (timer queues, streams). */
  redisUrl: string;
  secrets: Secrets;
  ports: Ports;
  replicas: number;
  /** Load before the first measured window and between the windows and the roll. */
  steadyMs: number;
  /** GRPC_MAX_CONNECTION_AGE_MS of every server (the chart's default is 30 s). */
  maxConnectionAgeMs: number;
  shutdownDelayMs: number;
  shutdownGraceMs: number;
  /** How long a stopping gateway or realtime replica still gets requests from the balancer. */
  lagMs: number;
  /** Shown as it happens. */
  note: (line: string) => void;
  verbose?: boolean;
}

export interface Step {
  replica: string;
  address: string;
  exitCode: number | null;
  /** SIGTERM to exit. */
  drainMs: number;
  /** Spawn to ready, of its replacement. */
  startMs: number;
  replacement: string;
  /** Wall-clock span of the step (ms since the epoch), from the SIGTERM to the replacement ready. */
  from: number;
  to: number;
}

/** Calls each replica of a service served in a window (gRPC calls; the gateway: HTTP requests; realtime: v0 sessions). */
export type Spread = Record<string, { replica: string; calls: number }[]>;

export interface RollingReport {
  requests: number;
  failures: Sample[];
  /** The longest any request of the load waited for its answer, and which. */
  longestWait: { ms: number; route: string };
  steps: Step[];
  spreadBefore: Spread;
  spreadAfter: Spread;
  verification: Verification;
  violations: string[];
  rollMs: number;
}

/** The series counted per service: what a replica of it serves. */
const SERIES: Record<string, RegExp> = {
  gateway: /^http_server_request_duration_count\{/,
  realtime: /^rundown_socketio_sessions(_total)?\{/,
};
const RPC_SERIES = /^rpc_server_call_duration_count\{/;

function countIn(text: string, series: RegExp): number {
  let total = 0;
  for (const line of text.split('\n')) if (series.test(line)) total += Number(line.slice(line.lastIndexOf(' ') + 1)) || 0;
  return total;
}

async function counts(system: ScaleOut): Promise<Map<Replica, number>> {
  const out = new Map<Replica, number>();
  for (const spec of SERVICES) {
    for (const { replica, text } of await system.scrape(spec.name)) out.set(replica, countIn(text, SERIES[spec.name] ?? RPC_SERIES));
  }
  return out;
}

/** Calls per live replica between two scrapes. */
async function measure(system: ScaleOut, windowMs: number): Promise<Spread> {
  const before = await counts(system);
  await sleep(windowMs);
  const after = await counts(system);
  const spread: Spread = {};
  for (const spec of SERVICES) {
    spread[spec.name] = system.live(spec.name).map((replica) => ({ replica: replica.name, calls: (after.get(replica) ?? 0) - (before.get(replica) ?? 0) }));
  }
  return spread;
}

/** The busiest replica's share of its service's calls. */
export function topShare(rows: { calls: number }[]): number {
  const total = rows.reduce((sum, r) => sum + r.calls, 0);
  return total === 0 ? 1 : Math.max(...rows.map((r) => r.calls)) / total;
}

export async function rollingRestart(options: RollingOptions): Promise<RollingReport> {
  const note = options.note;
  const crashes: string[] = [];
  const system = await ScaleOut.start({
    replicas: options.replicas,
    databaseUrl: options.databaseUrl,
    redisUrl: options.redisUrl,
    secrets: options.secrets,
    ports: options.ports,
    lagMs: options.lagMs,
    env: {
      LOG_LEVEL: 'warn',
      SHUTDOWN_DELAY_MS: String(options.shutdownDelayMs),
      SHUTDOWN_GRACE_MS: String(options.shutdownGraceMs),
      GRPC_MAX_CONNECTION_AGE_MS: String(options.maxConnectionAgeMs),
    },
    ...(options.verbose ? { onOutput: (replica: Replica, line: string) => note(`[${replica.name}] ${line}`) } : {}),
    onCrash: (replica, exit) => crashes.push(`${replica.name} (${replica.address}) exited by itself (${exit.code ?? exit.signal}):\n${replica.output.slice(-20).join('\n')}`),
  });
  const load = new MixedLoad(`${system.publicUrl}/v1`, Date.now().toString(36), options.verbose);
  try {
    note(`${options.replicas} replicas of every service ready; balancer ${system.publicUrl}`);
    const { teamId, owner, caller, v0Token } = await load.team(system.adminUrl, options.secrets.ADMIN_SECRET);
    const setup = (body: unknown) => load.rundown(owner, body);
    const writeRundowns = await Promise.all([0, 1].map((i) => setup({ title: `chaos-${load.run}-writes-${i}`, columns: [{ name: 'Script' }] })));
    const editRundown = await setup({ title: `chaos-${load.run}-edits`, cues: ['A', 'B', 'C', 'D'].map((title) => ({ title, duration_ms: 60_000 })) });
    const bulkRundown = await setup({
      title: `chaos-${load.run}-bulk`,
      columns: [{ name: 'Script' }],
      cues: Array.from({ length: 20 }, (_, i) => ({ title: `B${i}`, duration_ms: 10_000 })),
    });
    const actionRundowns = await Promise.all(
      [0, 1].map((i) => setup({ title: `chaos-${load.run}-actions-${i}`, cues: ['A', 'B', 'C', 'D'].map((t) => ({ title: t, duration_ms: 600_000 })) })),
    );
    for (const r of actionRundowns) await load.start(caller, r.id);

    const sse = [...writeRundowns, ...actionRundowns].map((r) => load.followSse(caller, r.id));
    const v0 = actionRundowns.flatMap((r) => [load.followV0(system.publicUrl, v0Token, r.id, false), load.followV0(system.publicUrl, v0Token, r.id, true)]);
    const actionLogs: ActionLog[] = actionRundowns.map((r) => ({ rundownId: r.id, acked: [] }));
    const loops = [
      ...writeRundowns.map((r, i) => load.writer(owner, r.id, r.columnId!, i)),
      ...actionLogs.map((log) => load.actor(caller, log, 300)),
      load.editor(owner, editRundown.id, editRundown.cueIds, 0),
      load.bulkWriter(owner, bulkRundown.id, bulkRundown.columnId!, bulkRundown.cueIds, 0),
      load.reader(caller, actionRundowns.map((r) => r.id)),
      load.supportReader(system.adminUrl, options.secrets.ADMIN_SECRET, teamId),
      load.showMaker(owner, caller, { pauseMs: 1500 }),
      load.showMaker(owner, caller, { scheduled: true, pauseMs: 1500 }),
      load.v0Churn(system.publicUrl, v0Token, actionRundowns[0]!.id),
    ];
    note(`load running: 2 writers, 2 actors, an editor, cells:bulk, status reads, support reads (admin), timed shows (deadlines, hard starts), ${sse.length} SSE, ${v0.length} v0 clients and v0 clients coming and going`);

    // Every client has seen every replica once each connection was aged out at least once.
    const settle = Math.round(options.maxConnectionAgeMs * 1.1) + 3_000;
    await sleep(Math.max(options.steadyMs, settle));
    note('measuring the spread before the roll');
    const spreadBefore = await measure(system, options.steadyMs);

    const steps: Step[] = [];
    const rollStart = performance.now();
    for (const spec of SERVICES) {
      for (const replica of system.live(spec.name)) {
        const from = Date.now();
        const asked = performance.now();
        const exit = await system.remove(replica);
        const started = performance.now();
        const next = await system.add(spec.name);
        steps.push({
          replica: replica.name,
          address: replica.address,
          exitCode: exit.code,
          drainMs: Math.round(exit.at - asked),
          startMs: Math.round(performance.now() - started),
          replacement: `${next.name} ${next.address}`,
          from,
          to: Date.now(),
        });
        note(`${replica.name} (${replica.address}) exited ${exit.code} after ${Math.round(exit.at - asked)} ms; ${next.name} ready on ${next.address} in ${Math.round(performance.now() - started)} ms`);
        if (exit.code !== 0) load.violate(`${replica.name} exited with ${exit.code}:\n${replica.output.slice(-15).join('\n')}`);
      }
    }
    const rollMs = Math.round(performance.now() - rollStart);

    await sleep(settle);
    note('measuring the spread after the roll');
    const spreadAfter = await measure(system, options.steadyMs);

    load.stop();
    note('stopping the load');
    await Promise.all(loops);
    await sleep(Math.max(3_000, load.lastShowEnd() + 3_000 - Date.now()));
    load.stopLiveClients();
    await Promise.all(sse.map((f) => f.done));
    const verification = await load.verify({ databaseUrl: options.databaseUrl, redisEnv: { REDIS_URL: options.redisUrl }, caller, actionLogs, sse, v0 });
    for (const f of v0) f.socket.close();

    const measured = load.samples.filter((s) => s.route !== 'setup' && s.route !== 'verify');
    const failures = measured.filter((s) => s.outcome !== 'ok' && s.outcome !== 'client_error');
    const longest = measured.reduce((best, s) => (s.end - s.start > best.ms ? { ms: s.end - s.start, route: s.route } : best), { ms: 0, route: '-' });
    for (const [service, rows] of [...Object.entries(spreadBefore), ...Object.entries(spreadAfter)]) {
      if (rows.length < 2 || topShare(rows) > 0.7) load.violate(`${service}: calls not spread over its replicas: ${JSON.stringify(rows)}`);
    }
    for (const crash of crashes) load.violate(crash);
    for (const f of failures) load.violate(`failed: ${f.route} ${f.outcome} ${f.status} ${f.code ?? ''} after ${f.end - f.start} ms ${f.detail ?? ''}`);
    // A stopping gateway ends its streams with `disconnect`; a stopping realtime replica closes its
    // clients' transports (a server-side disconnect would keep them from reconnecting).
    if (verification.sseCut > 0) load.violate(`${verification.sseCut} SSE streams broke off without a disconnect event`);
    for (const reason of Object.keys(verification.v0Reasons)) {
      if (reason !== 'transport close' && reason !== 'transport error') load.violate(`v0 clients disconnected for "${reason}"`);
    }
    return { requests: measured.length, failures, longestWait: longest, steps, spreadBefore, spreadAfter, verification, violations: load.violations, rollMs };
  } finally {
    load.stopLiveClients();
    await system.stop();
  }
}

function byRoute(samples: Sample[]): string {
  const counts = new Map<string, number>();
  for (const f of samples) counts.set(`${f.route} ${f.outcome}`, (counts.get(`${f.route} ${f.outcome}`) ?? 0) + 1);
  return [...counts].map(([k, n]) => `${k} ${n}`).join(', ');
}

/** The report as the run prints it. */
export function formatReport(r: RollingReport): string {
  const spread = (s: Spread) =>
    Object.entries(s)
      .map(([service, rows]) => `  ${service.padEnd(9)} ${rows.map((x) => `${x.replica} ${x.calls}`).join(', ')}   (busiest ${Math.round(topShare(rows) * 100)} %)`)
      .join('\n');
  const v = r.verification;
  return [
    `rolling restart: ${r.steps.length} replicas replaced one at a time in ${Math.round(r.rollMs / 1000)} s`,
    ...r.steps.map((s) => {
      const failed = r.failures.filter((f) => f.start >= s.from && f.start < s.to).length;
      return `  ${s.replica.padEnd(11)} ${s.address.padEnd(11)} exit ${s.exitCode}, drained in ${s.drainMs} ms; ${s.replacement} ready in ${s.startMs} ms; failed requests meanwhile ${failed}`;
    }),
    `requests        ${r.requests}, failed ${r.failures.length} (${byRoute(r.failures) || 'none'}; outside the steps ${r.failures.filter((f) => !r.steps.some((s) => f.start >= s.from && f.start < s.to)).length}); longest wait ${r.longestWait.ms} ms (${r.longestWait.route})`,
    `writes          ${v.acknowledged + v.unacknowledged} cue creates: acknowledged ${v.acknowledged}, lost ${v.lost}, duplicated ${v.duplicated}; cell writes acknowledged ${v.cellsAcked}, lost ${v.cellsLost}`,
    `edits           ${v.edits} cue edits (lost ${v.editsLost}), ${v.bulks} cells:bulk of 20 cells (lost ${v.bulksLost})`,
    `timers          ${v.timedShows} timed shows: ${v.deadlines} deadlines and ${v.scheduledStarts} hard starts, each fired once; latest ${v.maxLateMs} ms after its time`,
    `actions         ${v.actionsAcked} next/previous acknowledged`,
    `SSE             ${v.sseClients} clients, ${v.sseReconnects} reconnects (${v.sseResumed} resumed with Last-Event-ID); streams ended with disconnect ${v.sseDisconnects}, broken off ${v.sseCut}; nothing missed unless listed below`,
    `Socket.IO v0    ${v.v0Connects} connects of the followers (incl. reconnects; disconnected for ${JSON.stringify(v.v0Reasons)}), all following the show unless listed below`,
    'calls per replica before the roll:',
    spread(r.spreadBefore),
    'calls per replica after the roll:',
    spread(r.spreadAfter),
    `violations      ${r.violations.length}`,
    ...r.violations.slice(0, 40).map((v) => `  - ${v.slice(0, 400)}`),
  ].join('\n');
}
