import {
  SoapFaultError,
  UNABLE_TO_PROCESS,
  UNABLE_TO_READ,
  UnsupportedMediaTypeError,
  XmlReadError,
} from '../errors/errors.js';
import type { ServiceError } from '../errors/errors.js';
import { parseMediaType } from './content-type.js';
import type { MediaType } from './content-type.js';
import type { Operation } from '../operations/index.js';
import { decodeXml } from '../xml/decode.js';
import { readEnvelope } from '../xml/envelope-reader.js';
import type { Envelope, EnvelopeLimits } from '../xml/envelope-reader.js';
import type { ServiceRoutes } from './service-routes.js';
import { bindSoapArgs } from './soap-args.js';
import { SOAP11, guessVersion, versionOfNamespace } from './soap-version.js';
import type { SoapVersion } from './soap-version.js';
import type { Call } from './types.js';

export interface SoapRequest {
  readonly contentType: string | undefined;
  /** The SOAPAction header; undefined when absent (which is not the same as `""`). */
  readonly soapAction: string | undefined;
  readonly body: Buffer;
}

/** The outcome of reading: the version to answer in, and a call or the error to answer with. */
export type SoapRead =
  | { readonly version: SoapVersion; readonly call: Call; readonly mustUnderstand: string | null }
  | { readonly version: SoapVersion; readonly error: ServiceError };

const MISSING_ENVELOPE = 'Root element is not a SOAP Envelope.';
const MISSING_BODY = 'The SOAP Envelope has no Body element.';

/**
 * Reads a SOAP request following ASMX's SoapServerProtocol step by step:
 * 1. guess the version: 1.2 without a SOAPAction header or with application/soap+xml, else 1.1;
 * 2. route: 1.1 by SOAPAction; 1.2 by the Content-Type `action`, then by the body element;
 * 3. check the content type (text/xml or application/soap+xml, 415 otherwise);
 * 4. settle the version from the envelope namespace (VersionMismatch when unknown; a 1.1
 *    envelope must come as text/xml);
 * 5. read the parameters.
 * Each step's failure is answered in the version known at that step, as ASMX does.
 */
export function readSoap(routes: ServiceRoutes, req: SoapRequest, limits: EnvelopeLimits): SoapRead {
  const media = parseMediaType(req.contentType);
  // 1. The first guess.
  const guess = guessVersion(req.soapAction, media);
  const envelope = readEnvelopeOrError(req.body, media, routes.namespace, limits);
  // 2. Routing.
  const routed = guess === SOAP11 ? routeSoap11(routes, req.soapAction) : routeSoap12(routes, media, envelope);
  if (routed.op === undefined || routed.error !== undefined) return routingFailure(routed, envelope, guess);
  // 3. and 4. The content type, then the envelope's version.
  const settled = settleVersion(req.contentType, media, envelope, guess);
  if ('error' in settled) return settled;
  // 5. Parameters.
  return readParams(routes, routed.op, envelope, settled.version);
}

interface Routed {
  readonly op?: Operation | undefined;
  readonly error?: ServiceError | undefined;
  /** The body element was looked at to route (1.2 without a known action). */
  readonly peeked?: boolean;
}

function readEnvelopeOrError(body: Buffer, media: MediaType, namespace: string, limits: EnvelopeLimits): Envelope {
  try {
    return readEnvelope(decodeXml(body, media.param('charset')), namespace, limits);
  } catch (err) {
    if (!(err instanceof XmlReadError)) throw err;
    return { root: null, bodyElement: undefined, mustUnderstand: null, params: new Map(), error: err };
  }
}

/** SOAP 1.1: the SOAPAction header alone names the operation. */
function routeSoap11(routes: ServiceRoutes, soapAction: string | undefined): Routed {
  const action = decodeAction(unquote(soapAction ?? ''));
  const op = routes.byAction.get(action);
  return op !== undefined
    ? { op }
    : {
        error: new SoapFaultError('Client', `Server did not recognize the value of HTTP Header SOAPAction: ${action}.`),
      };
}

/** SOAP 1.2: the Content-Type `action`, else the body element. */
function routeSoap12(routes: ServiceRoutes, media: MediaType, envelope: Envelope): Routed {
  const raw = media.param('action');
  const action = raw === undefined || raw === '' ? undefined : decodeAction(raw);
  const byAction = action === undefined ? undefined : routes.byAction.get(action);
  if (byAction !== undefined) return { op: byAction };
  const peek = routeByBodyElement(routes, envelope);
  if (peek.error !== undefined || peek.op !== undefined) return { ...peek, peeked: true };
  const message =
    action === undefined
      ? 'Unable to handle request without a valid action parameter. Please supply a valid soap action.'
      : `Unable to handle request. The action '${action}' was not recognized.`;
  return { error: new SoapFaultError('Client', message), peeked: true };
}

/**
 * A routing failure is answered in the envelope's version when the body was peeked at (an
 * unknown envelope namespace then overrides every other error), else in the first guess's.
 */
function routingFailure(routed: Routed, envelope: Envelope, guess: SoapVersion): SoapRead {
  const error = routed.error ?? internal();
  if (routed.peeked === true && envelope.root !== null) {
    const v = versionOfNamespace(envelope.root.ns);
    return v === undefined ? versionMismatch(envelope.root.ns) : { version: v, error };
  }
  return { version: guess, error };
}

/** text/xml or application/soap+xml (415 otherwise); then the envelope namespace decides, and a 1.1 envelope must come as text/xml. */
function settleVersion(
  contentType: string | undefined,
  media: MediaType,
  envelope: Envelope,
  guess: SoapVersion,
): { readonly version: SoapVersion } | { readonly version: SoapVersion; readonly error: ServiceError } {
  if (media.base !== 'text/xml' && media.base !== 'application/soap+xml') {
    return { version: guess, error: new UnsupportedMediaTypeError(contentType ?? '') };
  }
  if (envelope.root === null) return { version: guess, error: envelope.error ?? internal() };
  const version = versionOfNamespace(envelope.root.ns);
  if (version === undefined) return versionMismatch(envelope.root.ns);
  if (version === SOAP11 && media.base !== 'text/xml')
    return { version, error: new UnsupportedMediaTypeError(contentType ?? '') };
  return { version };
}

/** The operation's arguments, from the body element when it is the operation's (else defaults). */
function readParams(routes: ServiceRoutes, op: Operation, envelope: Envelope, version: SoapVersion): SoapRead {
  if (envelope.root?.local !== 'Envelope') {
    return { version, error: new SoapFaultError('Client', `${UNABLE_TO_READ} ---> ${MISSING_ENVELOPE}`) };
  }
  if (envelope.error !== null) return { version, error: envelope.error };
  if (envelope.bodyElement === undefined) {
    return { version, error: new SoapFaultError('Client', `${UNABLE_TO_READ} ---> ${MISSING_BODY}`) };
  }
  const el = envelope.bodyElement;
  const matches = el !== null && el.ns === routes.namespace && el.local === op.name;
  try {
    const call = bindSoapArgs(op, matches ? envelope.params : null);
    return { version, call, mustUnderstand: envelope.mustUnderstand };
  } catch (err) {
    if (err instanceof SoapFaultError || err instanceof XmlReadError) return { version, error: err };
    throw err;
  }
}

/** ASMX's GetRequestElement: the first element in Body names the operation. */
function routeByBodyElement(
  routes: ServiceRoutes,
  envelope: Envelope,
): { op?: Operation | undefined; error?: ServiceError | undefined } {
  // Errors while peeking are not SOAP exceptions in ASMX: they become Server faults.
  const server = (reason: string): { error: ServiceError } => ({
    error: new SoapFaultError('Server', `${UNABLE_TO_PROCESS} ---> ${reason}`),
  });
  if (envelope.error !== null && envelope.error.beforeBody) return server(envelope.error.message);
  if (envelope.root === null) return server('Root element is missing.');
  if (envelope.root.local !== 'Envelope') return server(MISSING_ENVELOPE);
  if (envelope.bodyElement === undefined) return server(MISSING_BODY);
  const el = envelope.bodyElement;
  if (el === null || el.ns !== routes.namespace) return {};
  return { op: routes.byElement.get(el.local) };
}

function versionMismatch(ns: string): SoapRead {
  return {
    version: SOAP11,
    error: new SoapFaultError(
      'VersionMismatch',
      `Possible SOAP version mismatch: Envelope namespace ${ns} was unexpected. Expecting ${SOAP11.envelopeNs}.`,
    ),
  };
}

function internal(): ServiceError {
  return new SoapFaultError('Server', UNABLE_TO_PROCESS);
}

/** SOAPAction values arrive quoted (`"ns/Op"`); unquoted ones work too. */
function unquote(value: string): string {
  return value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
}

/** ASMX URL-decodes the action (HttpUtility.UrlDecode: `+` is a space, bad escapes stay). */
function decodeAction(value: string): string {
  if (!/[%+]/.test(value)) return value;
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    return value.replace(/\+/g, ' ');
  }
}
