/**
 * What the shadow knows of a request before anyone answers it: whether it goes to the legacy
 * service at all (it is under the base path), its labels as far as the path tells them, and
 * whether it may write (then it is never sent twice).
 */
import type { Service } from '../operations/index.js';
import type { HttpExchange } from '../http/http-exchange.js';

/** As reports and metrics name them: the four bindings, and `metadata` for WSDL, disco and help pages. */
export type BindingLabel = 'soap11' | 'soap12' | 'httpget' | 'httppost' | 'metadata';

/** Operations that change something (AuthCode sends an SMS): never replayed, only validated beside the legacy. */
export const WRITE_OPERATIONS: ReadonlySet<string> = new Set(['AuthCode']);

export interface RequestShape {
  /** Appended to SIS_LEGACY_URL: the target below SIS_BASE_PATH. */
  readonly relativeUrl: string;
  readonly service: string | null;
  /** The operation a GET/POST path names; null for SOAP (read from the body) and pages. */
  readonly operation: string | null;
  readonly binding: BindingLabel;
  /** The service file holds a write and this is not one of its pages. */
  readonly write: boolean;
  /** The request carries a body to send on. */
  readonly hasBody: boolean;
}

export interface ServiceFile {
  readonly name: string;
  readonly writes: boolean;
  /** Operation names by lower case (ASMX matches the path exactly, but labels should not split on case). */
  readonly operations: ReadonlyMap<string, string>;
}

export function serviceFiles(services: readonly Service[]): ReadonlyMap<string, ServiceFile> {
  return new Map(
    services.map((s) => [
      s.name.toLowerCase(),
      {
        name: s.name,
        writes: s.operations.some((op) => WRITE_OPERATIONS.has(op.name)),
        operations: new Map(s.operations.map((op) => [op.name.toLowerCase(), op.name])),
      },
    ]),
  );
}

/** Null when the request is not under the base path: the legacy service has nothing there. */
export function shapeOf(
  ex: HttpExchange,
  basePath: string,
  files: ReadonlyMap<string, ServiceFile>,
): RequestShape | null {
  if (!ex.url.startsWith(basePath)) return null;
  const relativeUrl = ex.url.slice(basePath.length);
  const target = ex.target;
  const file = target === null ? undefined : files.get(target.serviceKey);
  const length = ex.header('content-length');
  const hasBody = ex.header('transfer-encoding') !== undefined || (length !== undefined && length !== '0');
  const opPath = target?.opPath;
  const page = opPath === undefined && ex.method !== 'POST';
  let binding: BindingLabel;
  if (opPath !== undefined) binding = ex.method === 'GET' ? 'httpget' : 'httppost';
  else if (page) binding = 'metadata';
  else binding = /^\s*application\/soap\+xml\b/i.test(ex.header('content-type') ?? '') ? 'soap12' : 'soap11';
  return {
    relativeUrl,
    service: file?.name ?? null,
    operation: opPath === undefined ? null : (file?.operations.get(opPath.toLowerCase()) ?? null),
    binding,
    // A file with a write is written to by anything but its pages: unknown paths and faults included.
    write: (file?.writes ?? false) && !page,
    hasBody,
  };
}
