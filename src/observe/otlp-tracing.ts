/**
 * OpenTelemetry tracing over OTLP/HTTP, loaded only when OTEL_EXPORTER_OTLP_ENDPOINT is set (its
 * packages are imported here, at start, never otherwise). One server span per request, named and
 * described by the RPC semantic conventions (rpc.system, rpc.service, rpc.method), child of the
 * caller's `traceparent` when there is one; spans are batched and sent in the background.
 */
import type { Tracer } from '@opentelemetry/api';
import type { RequestSpan, TraceParent, Tracing } from './trace-context.js';
import { formatTraceparent } from './trace-context.js';

/** This service's spans as a trace shows them. */
const SERVICE_NAME = 'student-info-service';

export async function startOtlpTracing(endpoint: string): Promise<Tracing> {
  const [api, sdk, { OTLPTraceExporter }, { resourceFromAttributes }] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
  ]);
  // The generic endpoint names the collector; traces go to its /v1/traces (the OTLP exporter spec).
  // A collector that is down costs a stop at most this long (the exporter retries until then).
  const exporter = new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, '')}/v1/traces`, timeoutMillis: 3000 });
  const provider = new sdk.BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': SERVICE_NAME }),
    spanProcessors: [new sdk.BatchSpanProcessor(exporter)],
  });
  const tracer: Tracer = provider.getTracer(SERVICE_NAME);
  const { trace, ROOT_CONTEXT, SpanKind, SpanStatusCode, TraceFlags } = api;
  return {
    start(method: string, parent: TraceParent | null, startedAt: number): RequestSpan {
      const context =
        parent === null
          ? ROOT_CONTEXT
          : trace.setSpanContext(ROOT_CONTEXT, {
              traceId: parent.traceId,
              spanId: parent.parentId,
              traceFlags: parent.flags & TraceFlags.SAMPLED,
              isRemote: true,
            });
      const span = tracer.startSpan(
        method,
        { kind: SpanKind.SERVER, startTime: performance.timeOrigin + startedAt },
        context,
      );
      const ids = span.spanContext();
      return {
        traceId: ids.traceId,
        traceparent: formatTraceparent(ids.traceId, ids.spanId, ids.traceFlags),
        end(service, operation, binding, status) {
          // The RPC conventions' name: service/method; a request that reached no operation keeps the HTTP method.
          if (service !== undefined && operation !== undefined) span.updateName(`${service}/${operation}`);
          span.setAttributes({
            'rpc.system': 'asmx',
            ...(service === undefined ? {} : { 'rpc.service': service }),
            ...(operation === undefined ? {} : { 'rpc.method': operation }),
            ...(binding === undefined ? {} : { 'sis.binding': binding }),
            'http.request.method': method,
            'http.response.status_code': status,
          });
          if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
          span.end();
        },
      };
    },
    // Spans the collector cannot take are dropped: tracing never fails the service's stop.
    shutdown: () => provider.shutdown().catch(() => undefined),
  };
}
