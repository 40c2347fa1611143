import { describe, expect, it } from 'vitest';
import { formatPhases, phasesOf, spansOfExports, type TraceSpan } from './trace-phases.js';

const ns = (ms: number) => String(BigInt(Math.round(ms * 1000)) * 1000n);

/** An OTLP/HTTP JSON trace export of one service's spans. */
const otlpExport = (service: string, spans: { trace: string; id: string; parent?: string; name: string; start: number; end: number }[]) =>
  JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] },
        scopeSpans: [
          {
            spans: spans.map((s) => ({
              traceId: s.trace,
              spanId: s.id,
              ...(s.parent ? { parentSpanId: s.parent } : {}),
              name: s.name,
              startTimeUnixNano: ns(s.start),
              endTimeUnixNano: ns(s.end),
            })),
          },
        ],
      },
    ],
  });

describe('trace phases', () => {
  it('reads the spans of OTLP JSON exports, with their service, and skips what is not one', () => {
    const spans = spansOfExports([
      otlpExport('gateway', [{ trace: 't1', id: 'a', name: 'POST /v1/x', start: 1_764_000_000_000.5, end: 1_764_000_000_010.25 }]),
      'not json',
      '{}',
    ]);
    expect(spans).toEqual([{ traceId: 't1', spanId: 'a', parentSpanId: '', name: 'POST /v1/x', service: 'gateway', start: 1_764_000_000_000.5, end: 1_764_000_000_010.25 }]);
  });

  it('answers each span of the chosen traces by median start from its root and median duration, a repeated name by occurrence', () => {
    const trace = (id: string, at: number, insert: number): TraceSpan[] => [
      { traceId: id, spanId: `${id}r`, parentSpanId: '', name: 'POST /v1/bulk', service: 'gateway', start: at, end: at + 50 },
      { traceId: id, spanId: `${id}b`, parentSpanId: `${id}r`, name: 'pg.query:BEGIN\n db', service: 'cells', start: at + 10, end: at + 10.5 },
      { traceId: id, spanId: `${id}i`, parentSpanId: `${id}r`, name: 'pg.query:INSERT db', service: 'cells', start: at + 11, end: at + 11 + insert },
      { traceId: id, spanId: `${id}j`, parentSpanId: `${id}r`, name: 'pg.query:INSERT db', service: 'cells', start: at + 30, end: at + 32 },
    ];
    const other: TraceSpan = { traceId: 'x', spanId: 'x', parentSpanId: '', name: 'GET /v1/other', service: 'gateway', start: 0, end: 1 };
    const result = phasesOf([...trace('t1', 1000, 10), ...trace('t2', 2000, 12), ...trace('t3', 3000, 30), other], (s) => s.name.includes('bulk'));
    expect(result.traces).toBe(3);
    expect(result.phases).toEqual([
      { span: 'gateway POST /v1/bulk', n: 3, start: 0, duration: 50 },
      { span: 'cells pg.query:BEGIN db', n: 3, start: 10, duration: 0.5 },
      { span: 'cells pg.query:INSERT db', n: 3, start: 11, duration: 12 },
      { span: 'cells pg.query:INSERT db #2', n: 3, start: 30, duration: 2 },
    ]);
    const table = formatPhases('bulk', result).split('\n');
    expect(table[0]).toContain('bulk (3 traces');
    expect(table.at(-1)).toMatch(/^\s+30\.00\s+2\.00\s+3\s+cells pg\.query:INSERT db #2$/);
  });

  it('leaves out traces whose root was not chosen or is missing', () => {
    const orphan: TraceSpan = { traceId: 'o', spanId: 'c', parentSpanId: 'gone', name: 'POST /v1/bulk', service: 'cells', start: 0, end: 1 };
    expect(phasesOf([orphan], () => true)).toEqual({ traces: 0, phases: [] });
  });
});
