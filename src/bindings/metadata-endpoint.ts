import { renderDisco } from '../metadata/disco.js';
import { renderOperationHelp, renderServiceHelp } from '../metadata/help-page.js';
import { renderWsdl } from '../metadata/wsdl.js';
import type { Service } from '../operations/index.js';
import type { Reply } from '../reply/reply.js';

export interface MetadataRequest {
  /** `scheme://host[:port]` the client used. */
  readonly origin: string;
  readonly basePath: string;
  readonly host: string;
  readonly showTestForm: boolean;
}

const TEXT_XML = 'text/xml; charset=utf-8';
const HTML = 'text/html; charset=utf-8';
const MAX_CACHED = 64;

/**
 * `GET /X.asmx` with its query: `?WSDL` and `?disco` (any case), `?op=Op` help, else the service
 * help page. Documents depend on the address the client used, so they are cached per address
 * (bounded, since the Host header is the client's to choose).
 */
export class MetadataEndpoint {
  private readonly cache = new Map<string, string>();

  constructor(private readonly namespace: string) {}

  /** The reply, or null for a query form we do not serve (`?wsdl=x`, `?schema=x`): a 404. */
  render(service: Service, query: string, req: MetadataRequest): Reply | null {
    const first = decodeSafe(query.split('&')[0] ?? '');
    const key = first.toLowerCase();
    const path = `${req.basePath}${service.name}.asmx`;
    const address = `${req.origin}${path}`;
    if (key === 'wsdl') return xml(this.cached(`wsdl ${address}`, () => renderWsdl(service, this.namespace, address)));
    if (key === 'disco')
      return xml(this.cached(`disco ${address}`, () => renderDisco(service, this.namespace, address)));
    if (key.startsWith('wsdl=') || key.startsWith('schema=') || key.startsWith('disco=')) return null;
    const opts = { namespace: this.namespace, path, host: req.host, showTestForm: req.showTestForm };
    if (key.startsWith('op=')) {
      const name = first.slice(3);
      const op =
        service.operations.find((o) => o.name === name) ??
        service.operations.find((o) => o.name.toLowerCase() === name.toLowerCase());
      if (op !== undefined) return html(renderOperationHelp(service, op, opts));
    }
    return html(renderServiceHelp(service, opts));
  }

  private cached(key: string, make: () => string): string {
    let doc = this.cache.get(key);
    if (doc === undefined) {
      doc = make();
      if (this.cache.size >= MAX_CACHED) this.cache.delete(this.cache.keys().next().value!);
      this.cache.set(key, doc);
    }
    return doc;
  }
}

const xml = (body: string): Reply => ({ status: 200, contentType: TEXT_XML, body, invoked: true });
const html = (body: string): Reply => ({ status: 200, contentType: HTML, body, invoked: true });

function decodeSafe(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}
