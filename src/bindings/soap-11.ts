import { AsmxText } from '../errors/asmx-text.js';
import { SoapFaultError } from '../errors/errors.js';
import { escapeText } from '../xml/escape.js';
import { SOAP11_ENVELOPE_NS, SOAP12_ENVELOPE_NS } from '../xml/namespaces.js';
import { ENVELOPE_TAIL, decodeAction, envelopeStart } from './soap-envelope.js';
import type { Routed, SoapRequest, SoapRules } from './soap-envelope.js';
import type { ServiceRoutes } from './types.js';

const START = envelopeStart(SOAP11_ENVELOPE_NS);
/** A VersionMismatch fault names the envelopes we read, as ASMX's Upgrade header does. */
const UPGRADE = `<soap:Header><soap12:Upgrade xmlns:soap12="${SOAP12_ENVELOPE_NS}"><soap12:SupportedEnvelope qname="soap:Envelope" xmlns:soap="${SOAP11_ENVELOPE_NS}" /><soap12:SupportedEnvelope qname="soap12:Envelope" xmlns:soap12="${SOAP12_ENVELOPE_NS}" /></soap12:Upgrade></soap:Header>`;

/**
 * SOAP 1.1: the SOAPAction header alone names the operation; the envelope comes as text/xml;
 * a fault is `faultcode` and `faultstring`.
 */
export const SOAP11_RULES: SoapRules = {
  name: 'soap11',
  envelopeNs: SOAP11_ENVELOPE_NS,
  contentType: 'text/xml; charset=utf-8',
  route(routes: ServiceRoutes, req: SoapRequest): Routed {
    const action = decodeAction(unquote(req.soapAction ?? ''));
    const op = routes.byAction.get(action);
    if (op !== undefined) return { op };
    return { error: new SoapFaultError('Client', AsmxText.WebHttpHeader('SOAPAction', action)) };
  },
  accepts: (media) => media.base === 'text/xml',
  fault(code, message) {
    // MustUnderstand faults (SoapHeaderException) carry no detail element.
    const detail = code === 'MustUnderstand' ? '' : '<detail />';
    const header = code === 'VersionMismatch' ? UPGRADE : '';
    return `${START}${header}<soap:Body><soap:Fault><faultcode>soap:${code}</faultcode><faultstring>${escapeText(message)}</faultstring>${detail}</soap:Fault>${ENVELOPE_TAIL}`;
  },
};

/** SOAPAction values arrive quoted (`"ns/Op"`); unquoted ones work too. */
function unquote(value: string): string {
  return value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
}
