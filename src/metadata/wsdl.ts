/**
 * The service description (`X.asmx?WSDL`), built from the contract alone. Matches ASMX element
 * for element and byte for byte; only the root's namespace-declaration order is .NET's classic one
 * (decision 5) rather than Mono's hash order.
 */
import type { OperationSpec, ServiceSpec } from '../contract/types.js';
import { XSD_NS } from '../xml/namespaces.js';
import {
  httpResultElementName,
  MS_TYPES_NS,
  soapAction,
  SOAP_ENCODING_NS,
  SOAP_HTTP_TRANSPORT,
  TEXT_MATCHING_NS,
  ownTypesUsed,
  WSDL_HTTP_NS,
  WSDL_MIME_NS,
  WSDL_NS,
  WSDL_SOAP12_NS,
  WSDL_SOAP_NS,
} from './names.js';
import { wsdlTypes } from './wsdl-schema.js';
import { el, serializeDocument, type XmlElement } from './xml-document.js';

type HttpVerb = 'HttpGet' | 'HttpPost';

/**
 * @param namespace the service namespace (ASMX's `http://tempuri.org/`)
 * @param address the absolute URL of the .asmx, written into every port
 */
export function renderWsdl(service: ServiceSpec<unknown>, namespace: string, address: string): string {
  const ops = service.operations;
  const root: Record<string, string> = {
    'xmlns:soap': WSDL_SOAP_NS,
    'xmlns:tm': TEXT_MATCHING_NS,
    'xmlns:soapenc': SOAP_ENCODING_NS,
    'xmlns:mime': WSDL_MIME_NS,
    'xmlns:tns': namespace,
  };
  if (ownTypesUsed(ops).length > 0) root['xmlns:s1'] = MS_TYPES_NS;
  Object.assign(root, {
    'xmlns:s': XSD_NS,
    'xmlns:soap12': WSDL_SOAP12_NS,
    'xmlns:http': WSDL_HTTP_NS,
    targetNamespace: namespace,
    'xmlns:wsdl': WSDL_NS,
  });

  const name = service.name;
  return serializeDocument(
    el('wsdl:definitions', root, [
      wsdlTypes(ops, namespace),
      ...ops.flatMap(soapMessages),
      ...ops.flatMap((op) => httpMessages(op, 'HttpGet')),
      ...ops.flatMap((op) => httpMessages(op, 'HttpPost')),
      portType(`${name}Soap`, ops, 'Soap'),
      portType(`${name}HttpGet`, ops, 'HttpGet'),
      portType(`${name}HttpPost`, ops, 'HttpPost'),
      soapBinding(name, 'Soap', 'soap', ops, namespace),
      soapBinding(name, 'Soap12', 'soap12', ops, namespace),
      httpBinding(name, 'HttpGet', ops),
      httpBinding(name, 'HttpPost', ops),
      el('wsdl:service', { name }, [
        port(name, 'Soap', 'soap:address', address),
        port(name, 'Soap12', 'soap12:address', address),
        port(name, 'HttpGet', 'http:address', address),
        port(name, 'HttpPost', 'http:address', address),
      ]),
    ]),
  );
}

function soapMessages(op: OperationSpec): XmlElement[] {
  return [
    el('wsdl:message', { name: `${op.name}SoapIn` }, [
      el('wsdl:part', { name: 'parameters', element: `tns:${op.name}` }),
    ]),
    el('wsdl:message', { name: `${op.name}SoapOut` }, [
      el('wsdl:part', { name: 'parameters', element: `tns:${op.name}Response` }),
    ]),
  ];
}

/** HTTP parameters are always strings on the wire (a char is one literal character). */
function httpMessages(op: OperationSpec, verb: HttpVerb): XmlElement[] {
  const body = httpResultElementName(op.result);
  return [
    el(
      'wsdl:message',
      { name: `${op.name}${verb}In` },
      // Form and query fields are text whatever the parameter's type: ASMX types every part s:string.
      op.params.map((p) => el('wsdl:part', { name: p.name, type: 's:string' })),
    ),
    el(
      'wsdl:message',
      { name: `${op.name}${verb}Out` },
      body === null ? [] : [el('wsdl:part', { name: 'Body', element: `tns:${body}` })],
    ),
  ];
}

function portType(name: string, ops: readonly OperationSpec[], suffix: 'Soap' | HttpVerb): XmlElement {
  return el(
    'wsdl:portType',
    { name },
    ops.map((op) =>
      el('wsdl:operation', { name: op.name }, [
        el('wsdl:input', { message: `tns:${op.name}${suffix}In` }),
        el('wsdl:output', { message: `tns:${op.name}${suffix}Out` }),
      ]),
    ),
  );
}

/** SOAP 1.2 has no portType of its own: both SOAP bindings implement `XSoap`. */
function soapBinding(
  service: string,
  suffix: 'Soap' | 'Soap12',
  prefix: 'soap' | 'soap12',
  ops: readonly OperationSpec[],
  namespace: string,
): XmlElement {
  const body = (): XmlElement[] => [el(`${prefix}:body`, { use: 'literal' })];
  return el('wsdl:binding', { name: `${service}${suffix}`, type: `tns:${service}Soap` }, [
    el(`${prefix}:binding`, { transport: SOAP_HTTP_TRANSPORT }),
    ...ops.map((op) =>
      el('wsdl:operation', { name: op.name }, [
        el(`${prefix}:operation`, { soapAction: soapAction(namespace, op.name), style: 'document' }),
        el('wsdl:input', {}, body()),
        el('wsdl:output', {}, body()),
      ]),
    ),
  ]);
}

function httpBinding(service: string, verb: HttpVerb, ops: readonly OperationSpec[]): XmlElement {
  const input =
    verb === 'HttpGet' ? el('http:urlEncoded') : el('mime:content', { type: 'application/x-www-form-urlencoded' });
  return el('wsdl:binding', { name: `${service}${verb}`, type: `tns:${service}${verb}` }, [
    el('http:binding', { verb: verb === 'HttpGet' ? 'GET' : 'POST' }),
    ...ops.map((op) =>
      el('wsdl:operation', { name: op.name }, [
        el('http:operation', { location: `/${op.name}` }),
        el('wsdl:input', {}, [input]),
        // A void operation has no body, so its output names no part.
        el('wsdl:output', {}, op.result.kind === 'void' ? [] : [el('mime:mimeXml', { part: 'Body' })]),
      ]),
    ),
  ]);
}

function port(service: string, suffix: string, addressElement: string, address: string): XmlElement {
  return el('wsdl:port', { name: `${service}${suffix}`, binding: `tns:${service}${suffix}` }, [
    el(addressElement, { location: address }),
  ]);
}
