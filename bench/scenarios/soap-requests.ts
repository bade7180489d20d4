/** SOAP requests and their headers as .NET clients send them. */
import { DECL, NS, XSD, XSI, xmlText } from './asmx-xml.js';

/** A SOAP request as .NET clients format it (indented, as in the captures). */
export function soapRequest(
  ns: string,
  prefix: string,
  op: string,
  params: ReadonlyArray<readonly [string, string]>,
): string {
  const inner = params.map(([k, v]) => `\n      <${k}>${xmlText(v)}</${k}>`).join('');
  return `${DECL}
<${prefix}:Envelope xmlns:xsi="${XSI}" xmlns:xsd="${XSD}" xmlns:${prefix}="${ns}">
  <${prefix}:Body>
    <${op} xmlns="${NS}">${inner}
    </${op}>
  </${prefix}:Body>
</${prefix}:Envelope>`;
}

export const soap11Headers = (op: string): Record<string, string> => ({
  'Content-Type': 'text/xml; charset=utf-8',
  SOAPAction: `"${NS}${op}"`,
});
export const SOAP12_HEADERS = { 'Content-Type': 'application/soap+xml; charset=utf-8' };
