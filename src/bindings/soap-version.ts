import type { FaultCode } from '../errors/errors.js';
import type { MediaType } from './content-type.js';
import { escapeText } from '../xml/escape.js';
import { SOAP11_ENVELOPE_NS, SOAP12_ENVELOPE_NS, XML_DECLARATION, XSD_NS, XSI_NS } from '../xml/namespaces.js';

/**
 * What differs between SOAP 1.1 and 1.2 on the wire, and nothing else: the envelope namespace,
 * the content type, and the fault layout. Both keep the `soap` prefix, as ASMX does.
 */
export interface SoapVersion {
  readonly binding: 'soap11' | 'soap12';
  readonly envelopeNs: string;
  readonly contentType: string;
  /** Declaration, envelope start and `<soap:Body>`: everything before the answer element. */
  readonly head: string;
  /** `</soap:Body></soap:Envelope>`. */
  readonly tail: string;
  fault(code: FaultCode, message: string): string;
}

const envelopeStart = (ns: string): string =>
  `${XML_DECLARATION}<soap:Envelope xmlns:soap="${ns}" xmlns:xsi="${XSI_NS}" xmlns:xsd="${XSD_NS}">`;
const TAIL = '</soap:Body></soap:Envelope>';

export const SOAP11: SoapVersion = {
  binding: 'soap11',
  envelopeNs: SOAP11_ENVELOPE_NS,
  contentType: 'text/xml; charset=utf-8',
  head: `${envelopeStart(SOAP11_ENVELOPE_NS)}<soap:Body>`,
  tail: TAIL,
  fault(code, message) {
    // MustUnderstand faults (SoapHeaderException) carry no detail element.
    const detail = code === 'MustUnderstand' ? '' : '<detail />';
    const header =
      code === 'VersionMismatch'
        ? `<soap:Header><soap12:Upgrade xmlns:soap12="${SOAP12_ENVELOPE_NS}"><soap12:SupportedEnvelope qname="soap:Envelope" xmlns:soap="${SOAP11_ENVELOPE_NS}" /><soap12:SupportedEnvelope qname="soap12:Envelope" xmlns:soap12="${SOAP12_ENVELOPE_NS}" /></soap12:Upgrade></soap:Header>`
        : '';
    return `${envelopeStart(SOAP11_ENVELOPE_NS)}${header}<soap:Body><soap:Fault><faultcode>soap:${code}</faultcode><faultstring>${escapeText(message)}</faultstring>${detail}</soap:Fault>${TAIL}`;
  },
};

const SOAP12_CODES: Readonly<Record<FaultCode, string>> = {
  Client: 'Sender',
  Server: 'Receiver',
  VersionMismatch: 'VersionMismatch',
  MustUnderstand: 'MustUnderstand',
};

export const SOAP12: SoapVersion = {
  binding: 'soap12',
  envelopeNs: SOAP12_ENVELOPE_NS,
  contentType: 'application/soap+xml; charset=utf-8',
  head: `${envelopeStart(SOAP12_ENVELOPE_NS)}<soap:Body>`,
  tail: TAIL,
  fault(code, message) {
    const detail = code === 'MustUnderstand' ? '' : '<soap:Detail />';
    return `${envelopeStart(SOAP12_ENVELOPE_NS)}<soap:Body><soap:Fault><soap:Code><soap:Value>soap:${SOAP12_CODES[code]}</soap:Value></soap:Code><soap:Reason><soap:Text xml:lang="en">${escapeText(message)}</soap:Text></soap:Reason>${detail}</soap:Fault>${TAIL}`;
  },
};

/** The version an envelope namespace names, or undefined for an unknown one (VersionMismatch). */
export function versionOfNamespace(ns: string): SoapVersion | undefined {
  return ns === SOAP11_ENVELOPE_NS ? SOAP11 : ns === SOAP12_ENVELOPE_NS ? SOAP12 : undefined;
}

/**
 * ASMX's first guess, before the envelope is read: SOAP 1.2 when the request has no SOAPAction
 * header or comes as application/soap+xml, else 1.1. Errors met before the envelope settles the
 * version (an unreadable body, a bad route) are answered in this one.
 */
export function guessVersion(soapAction: string | undefined, media: MediaType): SoapVersion {
  return soapAction === undefined || media.base === 'application/soap+xml' ? SOAP12 : SOAP11;
}
