import { AsmxText } from '../errors/asmx-text.js';
import { SoapFaultError } from '../errors/errors.js';
import type { FaultCode } from '../errors/errors.js';
import type { Envelope } from '../xml/envelope-reader.js';
import { escapeText } from '../xml/escape.js';
import { SOAP12_ENVELOPE_NS } from '../xml/namespaces.js';
import type { MediaType } from './content-type.js';
import { ENVELOPE_TAIL, decodeAction, envelopeStart, routeByBodyElement } from './soap-envelope.js';
import type { Routed, SoapRequest, SoapRules } from './soap-envelope.js';
import type { ServiceRoutes } from './types.js';

const START = envelopeStart(SOAP12_ENVELOPE_NS);

const CODES: Readonly<Record<FaultCode, string>> = {
  Client: 'Sender',
  Server: 'Receiver',
  VersionMismatch: 'VersionMismatch',
  MustUnderstand: 'MustUnderstand',
};

/**
 * SOAP 1.2: the Content-Type's `action` parameter names the operation, else the body element;
 * the envelope comes as application/soap+xml (text/xml is read too, as ASMX does); a fault is
 * `Code`/`Value` and `Reason`/`Text`, with 1.2's names for the codes.
 */
export const SOAP12_RULES: SoapRules = {
  name: 'soap12',
  envelopeNs: SOAP12_ENVELOPE_NS,
  contentType: 'application/soap+xml; charset=utf-8',
  route(routes: ServiceRoutes, _req: SoapRequest, media: MediaType, envelope: Envelope): Routed {
    const raw = media.param('action');
    const action = raw === undefined || raw === '' ? undefined : decodeAction(raw);
    const byAction = action === undefined ? undefined : routes.byAction.get(action);
    if (byAction !== undefined) return { op: byAction };
    const peek = routeByBodyElement(routes, envelope);
    // Spelled out, not spread: a spread on the request path is dear (see withCaller, dispatch.ts).
    if (peek.error !== undefined || peek.op !== undefined) return { op: peek.op, error: peek.error, peeked: true };
    const message =
      action === undefined
        ? AsmxText.UnableToHandleRequestActionRequired0()
        : AsmxText.UnableToHandleRequestActionNotRecognized1(action);
    return { error: new SoapFaultError('Client', message), peeked: true };
  },
  accepts: () => true,
  fault(code, message) {
    const detail = code === 'MustUnderstand' ? '' : '<soap:Detail />';
    return `${START}<soap:Body><soap:Fault><soap:Code><soap:Value>soap:${CODES[code]}</soap:Value></soap:Code><soap:Reason><soap:Text xml:lang="en">${escapeText(message)}</soap:Text></soap:Reason>${detail}</soap:Fault>${ENVELOPE_TAIL}`;
  },
};
