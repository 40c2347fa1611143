// Every benchmark `npm run bench` runs, in order: one line each. A bench is a script in this folder that
// starts what it measures (compiled services, telemetry on), prints its own report, and records each
// figure with `recordFigure` (figures.ts) into the file named by BENCH_JSON. Under BENCH_QUICK=1 it
// uses the smaller counts of the quick run (CI).

export interface BenchEntry {
  /** Short name: the table's first column and `--only` picks by it. */
  name: string;
  /** The script, relative to scripts/bench. */
  script: string;
  /** Extra node flags (before the script). */
  nodeArgs?: string[];
  /** Arguments for the script (after it). */
  args?: string[];
  /** What it measures, for `--list`. */
  what: string;
}

export const BENCHES: BenchEntry[] = [
  { name: 'startup', script: 'startup.ts', what: 'npm start built and migrated: spawn -> ready against 7 bare node processes; CPU per service up to ready' },
  { name: 'latency', script: 'rundown-latency.ts', what: 'start-up time; sequential GET /v1/rundowns/:id' },
  { name: 'edge', script: 'edge.ts', what: 'healthz, GET /v1/auth, GET /v1/rundowns/:id under load against bare Express 5' },
  { name: 'runner', script: 'runner.ts', what: 'action:next, delayed-job lateness, GET /status against bare Express 5' },
  { name: 'cues', script: 'cues.ts', what: 'cues:bulk 500, GET 1,000 cues, cues:reorder 1,000' },
  { name: 'cells', script: 'cells.ts', what: 'cells:bulk 500 rich text, whole-rundown paged read, single reads' },
  { name: 'sse', script: 'sse.ts', nodeArgs: ['--experimental-websocket'], what: 'SSE fan-out against 1 client and a bare SSE server; memory per idle stream; a cue deadline to its over-time frame' },
  { name: 'v0', script: 'v0.ts', what: 'v0 Socket.IO fan-out against a bare Socket.IO server (with and without write coalescing); memory per idle socket' },
  { name: 'transfer', script: 'transfer.ts', what: 'export (JSON, CSV) and import (CSV, JSON) of a 1,000-cue, 20-column rundown against GET ?include=cues and the equivalent create' },
  { name: 'timing', script: 'timing.ts', what: 'GET /timing and /report (JSON, CSV) of a 1,000-cue show; action:next and GET /status with and without timing subscribers' },
  { name: 'redis-cluster', script: 'redis-cluster.ts', what: 'event index appends on its one Redis Cluster slot against the same over every primary; per-rundown appends' },
  { name: 'mcp', script: 'mcp.ts', what: 'an MCP tools/call get_status against GET /v1/rundowns/:id/status: sequential latency and throughput' },
  { name: 'workarounds', script: 'workarounds.ts', what: 'each reach into a library internal against the plain library: AsyncResource#bind' },
  { name: 'webhooks', script: 'webhooks.ts', what: 'webhook deliveries: event commit -> receiver at 50 events/s to 10 endpoints against SSE; highest sustained delivery rate against bare signed POSTs' },
];
