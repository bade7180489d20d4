import type { ResultValue } from '../contract/types.js';
import { AsmxText, chain } from '../errors/asmx-text.js';
import {
  InvalidArgumentError,
  OperationFailedError,
  RequestTooLargeError,
  SoapFaultError,
  UnsupportedMediaTypeError,
  XmlReadError,
} from '../errors/errors.js';
import type { FaultCode, ServiceError } from '../errors/errors.js';
import type { Operation } from '../operations/index.js';
import { wrapBody } from '../reply/reply.js';
import type { Reply } from '../reply/reply.js';
import { decodeXml } from '../xml/decode.js';
import { readEnvelope } from '../xml/envelope-reader.js';
import type { Envelope } from '../xml/envelope-reader.js';
import { SOAP11_ENVELOPE_NS, XML_DECLARATION, XSD_NS, XSI_NS } from '../xml/namespaces.js';
import type { ResultWriter } from '../xml/result-writer.js';
import { parseMediaType } from './content-type.js';
import type { MediaType } from './content-type.js';
import { bindSoapArgs } from './soap-args.js';
import type { Binding, Read } from './types.js';
import type { Exchange } from './types.js';
import type { ServiceRoutes } from './types.js';
import type { BindingName } from './types.js';

/** A SOAP request's parts that reading looks at. */
export interface SoapRequest {
  readonly contentType: string | undefined;
  /** The SOAPAction header; undefined when absent (which is not the same as `""`). */
  readonly soapAction: string | undefined;
  readonly body: Buffer;
}

/** Which operation a SOAP request names, or the fault that says it names none. */
export interface Routed {
  readonly op?: Operation | undefined;
  readonly error?: ServiceError | undefined;
  /** The body element was looked at to route (1.2 without a known action). */
  readonly peeked?: boolean;
}

/**
 * What differs between SOAP 1.1 (soap-11.ts) and 1.2 (soap-12.ts): the envelope namespace, the
 * content type, how a request names its operation, and the fault layout. Both keep the `soap`
 * prefix, as ASMX does; everything else is this module's.
 */
export interface SoapRules {
  readonly name: BindingName;
  readonly envelopeNs: string;
  readonly contentType: string;
  route(routes: ServiceRoutes, req: SoapRequest, media: MediaType, envelope: Envelope): Routed;
  /** Whether an envelope of this version may come with this media type (text/xml or SOAP 1.2's). */
  accepts(media: MediaType): boolean;
  /** The whole fault document. */
  fault(code: FaultCode, message: string): string;
}

/** Declaration and `<soap:Envelope ...>` start tag, as ASMX writes them. */
export const envelopeStart = (ns: string): string =>
  `${XML_DECLARATION}<soap:Envelope xmlns:soap="${ns}" xmlns:xsi="${XSI_NS}" xmlns:xsd="${XSD_NS}">`;
export const ENVELOPE_TAIL = '</soap:Body></soap:Envelope>';

const EMPTY = Buffer.alloc(0);

/** The version a request is answered in, and the error to answer with if any. */
interface Settled {
  readonly binding: SoapBinding;
  readonly error?: ServiceError | undefined;
}

/** The SOAP version an envelope namespace names (undefined: VersionMismatch). */
export type SoapVersionOf = (envelopeNs: string) => SoapBinding | undefined;

/**
 * A SOAP binding: one object per version, made in soap.ts. Reading follows ASMX's
 * SoapServerProtocol step by step, and each step's failure is answered in the version known at
 * that step, as ASMX does:
 * 1. the first guess picked this binding (soap.ts): 1.2 without a SOAPAction header or with
 *    application/soap+xml, else 1.1;
 * 2. route by this version's rule;
 * 3. check the content type (text/xml or application/soap+xml, 415 otherwise);
 * 4. settle the version from the envelope namespace (VersionMismatch when unknown; a 1.1
 *    envelope must come as text/xml);
 * 5. read the parameters; a mustUnderstand header refuses the call.
 */
export class SoapBinding implements Binding {
  readonly name: BindingName;
  /** Declaration, envelope start and `<soap:Body>`: everything before the answer element. */
  readonly #head: string;

  constructor(
    readonly rules: SoapRules,
    private readonly versionOf: SoapVersionOf,
  ) {
    this.name = rules.name;
    this.#head = `${envelopeStart(rules.envelopeNs)}<soap:Body>`;
  }

  /** Every SOAP route reads the body (Route.wantsBody); none is read as an empty one. */
  read(ex: Exchange, routes: ServiceRoutes, body: Buffer | null): Read {
    return this.readRequest(routes, {
      contentType: ex.header('content-type'),
      soapAction: ex.header('soapaction'),
      body: body ?? EMPTY,
    });
  }

  /** Steps 2 to 5 on a request whose body is read. */
  readRequest(routes: ServiceRoutes, req: SoapRequest): Read {
    const media = parseMediaType(req.contentType);
    const envelope = readEnvelopeOrError(req.body, media, routes);
    const routed = this.rules.route(routes, req, media, envelope);
    if (routed.op === undefined || routed.error !== undefined) return this.routingFailure(routed, envelope);
    const settled = this.settle(req.contentType, media, envelope);
    if (settled.error !== undefined) return { binding: settled.binding, error: settled.error };
    return settled.binding.readParams(routes, routed.op, envelope);
  }

  write(writer: ResultWriter, value: ResultValue): Reply {
    return {
      status: 200,
      contentType: this.rules.contentType,
      body: wrapBody(this.#head, writer.soapBody(value), ENVELOPE_TAIL),
      invoked: true,
    };
  }

  /** 400 and 415 carry no body (ASMX writes a fault only with status 500); the rest are faults. */
  fail(err: ServiceError): Reply {
    const { contentType } = this.rules;
    if (err instanceof XmlReadError) return { status: 400, contentType, body: '', invoked: false };
    if (err instanceof UnsupportedMediaTypeError) return { status: 415, contentType, body: '', invoked: false };
    if (err instanceof SoapFaultError) return this.fault(err.faultCode, err.message, err.invoked);
    if (err instanceof InvalidArgumentError) return this.fault('Client', err.message, true);
    if (err instanceof RequestTooLargeError) {
      return this.fault('Server', chain(AsmxText.WebConfigExtensionError(), err.message), false);
    }
    const msg = err instanceof OperationFailedError ? err.message : AsmxText.InternalError();
    return this.fault('Server', chain(AsmxText.WebRequestUnableToProcess(), msg), err.invoked);
  }

  private fault(code: FaultCode, message: string, invoked: boolean): Reply {
    return { status: 500, contentType: this.rules.contentType, body: this.rules.fault(code, message), invoked };
  }

  /**
   * A routing failure is answered in the envelope's version when the body was peeked at (an
   * unknown envelope namespace then overrides every other error), else in this first guess's.
   */
  private routingFailure(routed: Routed, envelope: Envelope): Read {
    const error = routed.error ?? internal();
    if (routed.peeked === true && envelope.root !== null) {
      const v = this.versionOf(envelope.root.ns);
      return v === undefined ? this.versionMismatch(envelope.root.ns) : { binding: v, error };
    }
    return { binding: this, error };
  }

  /** text/xml or application/soap+xml (415 otherwise); then the envelope namespace decides, and a 1.1 envelope must come as text/xml. */
  private settle(contentType: string | undefined, media: MediaType, envelope: Envelope): Settled {
    if (media.base !== 'text/xml' && media.base !== 'application/soap+xml') {
      return { binding: this, error: new UnsupportedMediaTypeError(contentType ?? '') };
    }
    if (envelope.root === null) return { binding: this, error: envelope.error ?? internal() };
    const version = this.versionOf(envelope.root.ns);
    if (version === undefined) return this.versionMismatch(envelope.root.ns);
    if (version.rules.accepts(media)) return { binding: version };
    return { binding: version, error: new UnsupportedMediaTypeError(contentType ?? '') };
  }

  /** The operation's arguments, from the body element when it is the operation's (else defaults). */
  private readParams(routes: ServiceRoutes, op: Operation, envelope: Envelope): Read {
    if (envelope.root?.local !== 'Envelope') return this.unreadable(op, AsmxText.WebMissingEnvelopeElement());
    if (envelope.error !== null) return { binding: this, error: envelope.error, operation: op.name };
    if (envelope.bodyElement === undefined) return this.unreadable(op, AsmxText.WebMissingBodyElement());
    const el = envelope.bodyElement;
    const matches = el !== null && el.ns === routes.namespace && el.local === op.name;
    let call;
    try {
      call = bindSoapArgs(op, matches ? envelope.params : null);
    } catch (err) {
      if (err instanceof SoapFaultError || err instanceof XmlReadError)
        return { binding: this, error: err, operation: op.name };
      throw err;
    }
    if (envelope.mustUnderstand === null) return { binding: this, call };
    // ASMX checks after running the method; we check before, so a refused call changes nothing.
    const message = AsmxText.WebCannotUnderstandHeader(envelope.mustUnderstand);
    return { binding: this, error: new SoapFaultError('MustUnderstand', message, true), operation: op.name };
  }

  /** A request ASMX could not read: a Client fault with the reason under its words. */
  private unreadable(op: Operation, reason: string): Read {
    const message = chain(AsmxText.WebRequestUnableToRead(), reason);
    return { binding: this, error: new SoapFaultError('Client', message), operation: op.name };
  }

  /** Always answered in SOAP 1.1, naming the namespace it expects. */
  private versionMismatch(ns: string): Settled & Read {
    const soap11 = this.versionOf(SOAP11_ENVELOPE_NS)!;
    const message = AsmxText.WebInvalidEnvelopeNamespace(ns, soap11.rules.envelopeNs);
    return { binding: soap11, error: new SoapFaultError('VersionMismatch', message) };
  }
}

function readEnvelopeOrError(body: Buffer, media: MediaType, routes: ServiceRoutes): Envelope {
  try {
    return readEnvelope(decodeXml(body, media.param('charset')), routes.namespace, routes.limits.envelope);
  } catch (err) {
    if (!(err instanceof XmlReadError)) throw err;
    return { root: null, bodyElement: undefined, mustUnderstand: null, params: new Map(), error: err };
  }
}

/** ASMX's GetRequestElement: the first element in Body names the operation. */
export function routeByBodyElement(routes: ServiceRoutes, envelope: Envelope): Routed {
  if (envelope.error !== null && envelope.error.beforeBody) return server(envelope.error.message);
  if (envelope.root === null) return server(AsmxText.Xml_MissingRoot());
  if (envelope.root.local !== 'Envelope') return server(AsmxText.WebMissingEnvelopeElement());
  if (envelope.bodyElement === undefined) return server(AsmxText.WebMissingBodyElement());
  const el = envelope.bodyElement;
  if (el === null || el.ns !== routes.namespace) return {};
  return { op: routes.byElement.get(el.local) };
}

/** Errors while peeking are not SOAP exceptions in ASMX: they become Server faults. */
function server(reason: string): Routed {
  return { error: new SoapFaultError('Server', chain(AsmxText.WebRequestUnableToProcess(), reason)) };
}

function internal(): ServiceError {
  return new SoapFaultError('Server', AsmxText.WebRequestUnableToProcess());
}

/** ASMX URL-decodes the action (HttpUtility.UrlDecode: `+` is a space, bad escapes stay). */
export function decodeAction(value: string): string {
  if (!/[%+]/.test(value)) return value;
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    return value.replace(/\+/g, ' ');
  }
}
