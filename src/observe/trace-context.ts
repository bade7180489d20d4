/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/): the `traceparent` a request carries,
 * read only when asked; and the seam to OpenTelemetry (otlp-tracing.ts), which exists only when
 * OTEL_EXPORTER_OTLP_ENDPOINT is set. Without both, a request costs nothing here: no header
 * parsed, no id made, no object.
 */

export interface TraceParent {
  /** 32 lower-case hex digits, not all zero. */
  readonly traceId: string;
  /** The caller's span: 16 lower-case hex digits, not all zero. */
  readonly parentId: string;
  /** Bit 0: the caller sampled (recorded) this trace. */
  readonly flags: number;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-|$)/;

/**
 * The header's context, or null for none or an invalid one (the spec: start afresh). Version ff
 * is invalid; a later version is read by its first four fields.
 */
export function parseTraceparent(header: string | undefined): TraceParent | null {
  if (header === undefined || header.length < 55) return null;
  const m = TRACEPARENT.exec(header.trim());
  if (m === null) return null;
  const [, version, traceId, parentId, flags, rest] = m;
  if (version === 'ff' || (version === '00' && rest !== '')) return null;
  if (/^0+$/.test(traceId!) || /^0+$/.test(parentId!)) return null;
  return { traceId: traceId!, parentId: parentId!, flags: parseInt(flags!, 16) };
}

/** The header for a request sent on, in the span `spanId` of `traceId`. */
export function formatTraceparent(traceId: string, spanId: string, flags: number): string {
  return `00-${traceId}-${spanId}-${(flags & 0xff).toString(16).padStart(2, '0')}`;
}

/** A request's span while tracing: its ids, known from its start, and its end. */
export interface RequestSpan {
  readonly traceId: string;
  /** What a request sent on in this span carries as its `traceparent`. */
  readonly traceparent: string;
  /** Names the span by what was routed (service/operation, RPC conventions) and sends it. */
  end(service: string | undefined, operation: string | undefined, binding: string | undefined, status: number): void;
}

export interface Tracing {
  /** A server span from `startedAt` (performance.now()), child of the caller's when there is one. */
  start(method: string, parent: TraceParent | null, startedAt: number): RequestSpan;
  /** Sends what is pending and stops. */
  shutdown(): Promise<void>;
}

/**
 * `rawHeaders` (name, value, …) with `traceparent` set to ours (null: none): a copy, made only
 * while tracing or when the caller's is not valid.
 */
export function withTraceparent(rawHeaders: readonly string[], traceparent: string | null): string[] {
  const headers: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!.toLowerCase();
    // The caller's tracestate belongs to its traceparent: ours replaces both.
    if (name === 'traceparent' || name === 'tracestate') continue;
    headers.push(rawHeaders[i]!, rawHeaders[i + 1]!);
  }
  if (traceparent !== null) headers.push('traceparent', traceparent);
  return headers;
}
