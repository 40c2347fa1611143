// Where a request's time goes, from its own spans: the median start (from the request's root span)
// and duration of every span its traces hold, service by service. A bench keeps the OTLP exports its
// trace sink received (`startTraceSink({ keep: true })`) and prints `formatPhases(phasesOf(...))`
// for the requests it measured. Gaps between spans are the time no span covers (CPU between
// statements, queueing behind other work, encoding and decoding a message). Starts are whole
// milliseconds (the SDK stamps a span's start with Date.now()); durations are exact.
import { exportedSpans, type ExportedSpan } from '../../test/support/otlp.js';
import { percentile } from './stats.js';

/** One exported span, as the phases need it. */
export interface TraceSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  service: string;
  /** Epoch milliseconds. */
  start: number;
  end: number;
}

/** The spans of OTLP/HTTP JSON trace exports (the body of each POST to /v1/traces); other bodies are skipped. */
export function spansOfExports(bodies: string[]): TraceSpan[] {
  const spans: TraceSpan[] = [];
  for (const body of bodies) {
    let exported: ExportedSpan[];
    try {
      exported = exportedSpans(body);
    } catch {
      continue;
    }
    for (const s of exported) {
      spans.push({
        traceId: s.traceId,
        spanId: s.spanId,
        parentSpanId: s.parentSpanId ?? '',
        name: s.name,
        service: s.service,
        start: Number(BigInt(s.startTimeUnixNano) / 1000n) / 1000,
        end: Number(BigInt(s.endTimeUnixNano) / 1000n) / 1000,
      });
    }
  }
  return spans;
}

export interface Phase {
  /** `service span-name`, with `#2`, `#3`... for a span name a trace holds more than once, in start order. */
  span: string;
  /** Traces that held it. */
  n: number;
  /** Median start from the root span's start, and median duration, ms. */
  start: number;
  duration: number;
}

/**
 * The phases of the traces whose root span (no parent) `isRoot` picks: one row per span (a span
 * name repeated within a trace counted by occurrence), ordered by median start. The root itself is
 * the first row: its duration is the request's time as the first service saw it.
 */
export function phasesOf(spans: TraceSpan[], isRoot: (span: TraceSpan) => boolean): { traces: number; phases: Phase[] } {
  const byTrace = new Map<string, TraceSpan[]>();
  for (const span of spans) {
    const trace = byTrace.get(span.traceId);
    if (trace) trace.push(span);
    else byTrace.set(span.traceId, [span]);
  }
  const rows = new Map<string, { starts: number[]; durations: number[] }>();
  let traces = 0;
  for (const trace of byTrace.values()) {
    const root = trace.find((s) => s.parentSpanId === '' && isRoot(s));
    if (!root) continue;
    traces++;
    const seen = new Map<string, number>();
    for (const span of [...trace].sort((a, b) => a.start - b.start || b.end - a.end)) {
      // A PostgreSQL span is named by its statement's first word and the database (`pg.query:SELECT db`),
      // which a statement's own line break can split.
      const name = `${span.service} ${span.name.replace(/\s+/g, ' ')}`;
      const occurrence = (seen.get(name) ?? 0) + 1;
      seen.set(name, occurrence);
      const key = occurrence > 1 ? `${name} #${occurrence}` : name;
      const row = rows.get(key) ?? { starts: [], durations: [] };
      row.starts.push(span.start - root.start);
      row.durations.push(span.end - span.start);
      rows.set(key, row);
    }
  }
  const median = (values: number[]) => percentile([...values].sort((a, b) => a - b), 50);
  const phases = [...rows].map(([span, row]) => ({ span, n: row.starts.length, start: median(row.starts), duration: median(row.durations) }));
  return { traces, phases: phases.sort((a, b) => a.start - b.start || b.duration - a.duration) };
}

/** The phases as a table: median start and duration (ms), how many traces held each, and the span. */
export function formatPhases(title: string, { traces, phases }: ReturnType<typeof phasesOf>): string {
  const lines = [`${title} (${traces} traces; median start from the root span, median duration; ms)`];
  lines.push(`  ${'start'.padStart(8)} ${'duration'.padStart(9)} ${'n'.padStart(4)}  span`);
  for (const p of phases) lines.push(`  ${p.start.toFixed(2).padStart(8)} ${p.duration.toFixed(2).padStart(9)} ${String(p.n).padStart(4)}  ${p.span}`);
  return lines.join('\n');
}
