import { ROOT_CONTEXT, SpanKind, trace, TraceFlags } from '@opentelemetry/api';
import { SamplingDecision } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { DEFAULT_TRACE_RATIO, SamplerConfigError, traceSampler } from './trace-sampler.js';

/** How a sampler decides a new trace (by its id) or a child of a caller's span with `flags`. */
const decide = (env: NodeJS.ProcessEnv, traceId: string, flags?: TraceFlags, exporting = true) => {
  const parent = flags === undefined ? ROOT_CONTEXT : trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId: '00f067aa0ba902b7', traceFlags: flags, isRemote: true });
  return traceSampler(env, exporting).shouldSample(parent, traceId, 'GET', SpanKind.SERVER, {}, []).decision;
};
const sampled = SamplingDecision.RECORD_AND_SAMPLED;
const dropped = SamplingDecision.NOT_RECORD;
/** Trace ids whose ratio position is low (kept by any ratio above it) and high (dropped below 1). */
const low = '00000000000000000000000000000001';
const high = '0000000000000000000000007fffffff';

describe('the trace sampler from the environment', () => {
  it('defaults to a parent-based tenth of new traces', () => {
    expect(DEFAULT_TRACE_RATIO).toBe(0.1);
    expect(traceSampler({}, true).toString()).toMatch(/^ParentBased\{root=TraceIdRatioBased\{0\.1\}/);
    expect(decide({}, low)).toBe(sampled);
    expect(decide({}, high)).toBe(dropped);
  });

  it("follows the caller's decision whatever the ratio", () => {
    expect(decide({ OTEL_TRACES_SAMPLER_ARG: '0' }, low, TraceFlags.SAMPLED)).toBe(sampled);
    expect(decide({ OTEL_TRACES_SAMPLER_ARG: '1' }, low, TraceFlags.NONE)).toBe(dropped);
  });

  it('takes the ratio and the standard sampler names', () => {
    expect(decide({ OTEL_TRACES_SAMPLER_ARG: '1' }, high)).toBe(sampled);
    expect(decide({ OTEL_TRACES_SAMPLER_ARG: '0' }, low)).toBe(dropped);
    expect(decide({ OTEL_TRACES_SAMPLER: 'parentbased_always_on' }, high)).toBe(sampled);
    expect(decide({ OTEL_TRACES_SAMPLER: 'always_off' }, low, TraceFlags.SAMPLED)).toBe(dropped);
    expect(decide({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' }, low, TraceFlags.SAMPLED)).toBe(dropped);
  });

  it('records no new trace without an exporter', () => {
    expect(decide({ OTEL_TRACES_SAMPLER_ARG: '1' }, low, undefined, false)).toBe(dropped);
  });

  it('refuses what is not a sampler or a ratio', () => {
    expect(() => traceSampler({ OTEL_TRACES_SAMPLER: 'jaeger_remote' }, true)).toThrow(SamplerConfigError);
    for (const arg of ['1.5', '-0.1', 'ten percent']) expect(() => traceSampler({ OTEL_TRACES_SAMPLER_ARG: arg }, true)).toThrow(SamplerConfigError);
  });
});
