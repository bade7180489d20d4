/**
 * The discovery document (`X.asmx?disco`) as ASMX writes it: the contract and documentation
 * references, then one `soap` element per SOAP binding, each declaring its own prefix (q1, q2).
 */
import type { ServiceSpec } from '../contract/types.js';
import { XSD_NS, XSI_NS } from '../xml/namespaces.js';
import { el, serializeDocument } from './xml-document.js';

const DISCO_NS = 'http://schemas.xmlsoap.org/disco/';
const DISCO_SCL_NS = 'http://schemas.xmlsoap.org/disco/scl/';
const DISCO_SOAP_NS = 'http://schemas.xmlsoap.org/disco/soap/';

/** @param address the absolute URL of the .asmx */
export function renderDisco(service: ServiceSpec<unknown>, namespace: string, address: string): string {
  const soap = (prefix: string, binding: string) =>
    el('soap', {
      address,
      [`xmlns:${prefix}`]: namespace,
      binding: `${prefix}:${service.name}${binding}`,
      xmlns: DISCO_SOAP_NS,
    });
  return serializeDocument(
    el('discovery', { 'xmlns:xsd': XSD_NS, 'xmlns:xsi': XSI_NS, xmlns: DISCO_NS }, [
      el('contractRef', { ref: `${address}?wsdl`, docRef: address, xmlns: DISCO_SCL_NS }),
      soap('q1', 'Soap'),
      soap('q2', 'Soap12'),
    ]),
  );
}
