import { SOAP11_ENVELOPE_NS, SOAP12_ENVELOPE_NS } from '../xml/namespaces.js';
import { parseMediaType } from './content-type.js';
import { SOAP11_RULES } from './soap-11.js';
import { SOAP12_RULES } from './soap-12.js';
import { SoapBinding } from './soap-envelope.js';

/** The SOAP 1.1 binding: SOAP 1.1's rules (soap-11.ts) on the shared envelope (soap-envelope.ts). */
export const SOAP11: SoapBinding = new SoapBinding(SOAP11_RULES, versionOf);
/** The SOAP 1.2 binding: SOAP 1.2's rules (soap-12.ts) on the shared envelope. */
export const SOAP12: SoapBinding = new SoapBinding(SOAP12_RULES, versionOf);

/**
 * ASMX's first guess for `POST /X.asmx`, before the envelope is read (route.ts asks it): SOAP 1.2
 * when the request has no SOAPAction header or comes as application/soap+xml, else 1.1. Errors
 * met before the envelope settles the version (an unreadable body, a bad route) are answered in
 * this one.
 */
export function firstGuess(soapAction: string | undefined, contentType: string | undefined): SoapBinding {
  if (soapAction === undefined) return SOAP12;
  return parseMediaType(contentType).base === 'application/soap+xml' ? SOAP12 : SOAP11;
}

/** The version an envelope namespace names, or undefined for an unknown one (VersionMismatch). */
function versionOf(ns: string): SoapBinding | undefined {
  return ns === SOAP11_ENVELOPE_NS ? SOAP11 : ns === SOAP12_ENVELOPE_NS ? SOAP12 : undefined;
}
