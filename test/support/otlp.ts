/** A span as an OTLP/HTTP JSON trace export carries it (the fields the tests and benches read). */
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  links?: { traceId: string; spanId: string }[];
  attributes?: { key: string; value: { doubleValue?: number; intValue?: number | string; stringValue?: string } }[];
}

/** A span and the service that exported it (its resource's `service.name`). */
export interface ExportedSpan extends OtlpSpan {
  service: string;
}

interface OtlpTraceExport {
  resourceSpans?: { resource?: { attributes?: { key: string; value: { stringValue?: string } }[] }; scopeSpans?: { spans?: OtlpSpan[] }[] }[];
}

/** The spans of one OTLP/HTTP JSON trace export (the body of a POST to /v1/traces); throws on a body that is not JSON. */
export function exportedSpans(body: string): ExportedSpan[] {
  const spans: ExportedSpan[] = [];
  for (const resource of (JSON.parse(body) as OtlpTraceExport).resourceSpans ?? []) {
    const service = resource.resource?.attributes?.find((a) => a.key === 'service.name')?.value.stringValue ?? '?';
    for (const scope of resource.scopeSpans ?? []) for (const span of scope.spans ?? []) spans.push({ ...span, service });
  }
  return spans;
}
