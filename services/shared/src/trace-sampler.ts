import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type Sampler,
} from '@opentelemetry/sdk-trace-base';

/**
 * The share of new traces recorded and exported when nothing says otherwise. A tenth keeps tens of
 * whole traces a second from a busy replica (plenty to see where a slow request's time went) while
 * recording, batching and exporting spans costs a tenth of what it would for every request; a
 * sampled-out request pays only for its ids and their propagation. Parent-based, so a trace is
 * whole across every hop, and a caller that sends a sampled `traceparent` (an ingress, a mesh, an
 * engineer chasing one request) gets its request traced whatever the ratio.
 */
export const DEFAULT_TRACE_RATIO = 0.1;

const SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const;

/** A sampler setting that is not one of the standard ones: the process refuses to start (exit 78). */
export class SamplerConfigError extends Error {}

/**
 * The head sampler from the standard variables: OTEL_TRACES_SAMPLER (default
 * `parentbased_traceidratio`, the other standard names accepted) and OTEL_TRACES_SAMPLER_ARG (the
 * ratio, 0 to 1, default `DEFAULT_TRACE_RATIO`). Without an exporter nothing would receive spans,
 * so new traces are not recorded at all (a caller's sampled parent still is, as before).
 */
export function traceSampler(env: NodeJS.ProcessEnv, exporting: boolean): Sampler {
  const name = (env.OTEL_TRACES_SAMPLER || 'parentbased_traceidratio').trim().toLowerCase();
  if (!(SAMPLERS as readonly string[]).includes(name)) throw new SamplerConfigError(`OTEL_TRACES_SAMPLER=${name} is not one of ${SAMPLERS.join(', ')}`);
  const raw = env.OTEL_TRACES_SAMPLER_ARG?.trim();
  const ratio = raw === undefined || raw === '' ? DEFAULT_TRACE_RATIO : Number(raw);
  if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1) throw new SamplerConfigError(`OTEL_TRACES_SAMPLER_ARG=${raw} is not a ratio from 0 to 1`);
  const root: Sampler = !exporting || name.endsWith('always_off') ? new AlwaysOffSampler() : name.endsWith('always_on') ? new AlwaysOnSampler() : new TraceIdRatioBasedSampler(ratio);
  return name.startsWith('parentbased_') ? new ParentBasedSampler({ root }) : root;
}
