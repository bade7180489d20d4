/**
 * The sample requests and responses of an operation's help page, one pair per binding, in the
 * shape .NET's help page shows them and our service answers: headers, a blank line, then the
 * indented XML (or form body), with the parts a caller fills in marked as placeholders.
 */
import { scalarOf } from '../contract/scalars.js';
import type { OperationSpec, ResultSpec, StructSpec } from '../contract/types.js';
import { escapeAttr } from '../xml/escape.js';
import { SOAP11_ENVELOPE_NS, SOAP12_ENVELOPE_NS, XML_DECLARATION, XSD_NS, XSI_NS } from '../xml/namespaces.js';
import { httpResultElementName, soapAction } from './names.js';

/** Literal text, or a placeholder (`string`, `length`) the reader replaces. */
export type Piece = string | { readonly placeholder: string };
type Line = readonly Piece[];

export interface BindingSample {
  readonly id: string;
  readonly title: string;
  readonly request: readonly Piece[];
  readonly response: readonly Piece[];
}

export interface SampleTarget {
  readonly namespace: string;
  /** The .asmx request path. */
  readonly path: string;
  readonly host: string;
}

/** SOAP 1.1, SOAP 1.2, HTTP GET and HTTP POST, in the order .NET's page lists them. */
export function bindingSamples(op: OperationSpec, target: SampleTarget): readonly BindingSample[] {
  return [
    soapSample(op, target, '1.1'),
    soapSample(op, target, '1.2'),
    httpGetSample(op, target),
    httpPostSample(op, target),
  ];
}

/** A sample element: a placeholder value, children, or neither (written `<a />`). */
interface SampleNode {
  readonly name: string;
  readonly xmlns?: string;
  readonly value?: string;
  readonly children?: readonly SampleNode[];
}

function nodeLines(node: SampleNode, depth: number): Line[] {
  const pad = '  '.repeat(depth);
  const open = `${pad}<${node.name}${node.xmlns === undefined ? '' : ` xmlns="${escapeAttr(node.xmlns)}"`}`;
  if (node.value !== undefined) return [[`${open}>`, { placeholder: node.value }, `</${node.name}>`]];
  const children = node.children ?? [];
  if (children.length === 0) return [[`${open} />`]];
  return [[`${open}>`], ...children.flatMap((c) => nodeLines(c, depth + 1)), [`${pad}</${node.name}>`]];
}

function structNode(name: string, struct: StructSpec): SampleNode {
  return { name, children: struct.fields.map((f) => ({ name: f, value: scalarOf('string').sample })) };
}

/** A result value under the given element name; lists show two items, as .NET's samples do. */
function resultNode(name: string, result: ResultSpec): SampleNode | null {
  switch (result.kind) {
    case 'void':
      return null;
    case 'struct':
      return structNode(name, result.struct);
    case 'list': {
      const item = structNode(result.item.name, result.item);
      return { name, children: [item, item] };
    }
    default:
      return { name, value: scalarOf(result.kind).sample };
  }
}

const LENGTH: Line = ['Content-Length: ', { placeholder: 'length' }];

function soapSample(op: OperationSpec, target: SampleTarget, version: '1.1' | '1.2'): BindingSample {
  const prefix = version === '1.1' ? 'soap' : 'soap12';
  const contentType =
    version === '1.1' ? 'Content-Type: text/xml; charset=utf-8' : 'Content-Type: application/soap+xml; charset=utf-8';
  const envelope = (body: SampleNode): Line[] => [
    [XML_DECLARATION],
    [
      `<${prefix}:Envelope xmlns:xsi="${XSI_NS}" xmlns:xsd="${XSD_NS}" ` +
        `xmlns:${prefix}="${version === '1.1' ? SOAP11_ENVELOPE_NS : SOAP12_ENVELOPE_NS}">`,
    ],
    [`  <${prefix}:Body>`],
    ...nodeLines(body, 2),
    [`  </${prefix}:Body>`],
    [`</${prefix}:Envelope>`],
  ];
  const request: SampleNode = {
    name: op.name,
    xmlns: target.namespace,
    // The sample names the type, as .NET's does (a char too, though SOAP carries its numeric code).
    children: op.params.map((p) => ({ name: p.name, value: scalarOf(p.type).sample })),
  };
  const result = resultNode(`${op.name}Result`, op.result);
  const response: SampleNode = {
    name: `${op.name}Response`,
    xmlns: target.namespace,
    children: result ? [result] : [],
  };
  const headers: Line[] = [[`POST ${target.path} HTTP/1.1`], [`Host: ${target.host}`], [contentType], LENGTH];
  // SOAP 1.2 carries the action in the Content-Type's optional parameter, which the sample leaves out.
  if (version === '1.1') headers.push([`SOAPAction: "${soapAction(target.namespace, op.name)}"`]);
  return {
    id: version === '1.1' ? 'soap11' : 'soap12',
    title: `SOAP ${version}`,
    request: join([...headers, [], ...envelope(request)]),
    response: join([['HTTP/1.1 200 OK'], [contentType], LENGTH, [], ...envelope(response)]),
  };
}

/**
 * HTTP parameters are strings whatever their type (the WSDL's HTTP message parts are all
 * `s:string`), so .NET's sample shows `string` for an int or a char too.
 */
function formPairs(op: OperationSpec): Piece[] {
  return op.params.flatMap((p, i): Piece[] => [`${i === 0 ? '' : '&'}${p.name}=`, { placeholder: 'string' }]);
}

/** The GET/POST answer: XmlSerializer's root element, or nothing at all for void. */
function httpResponse(op: OperationSpec, namespace: string): readonly Piece[] {
  const rootName = httpResultElementName(op.result);
  const root = rootName === null ? null : resultNode(rootName, op.result);
  if (root === null) return join([['HTTP/1.1 200 OK']]);
  return join([
    ['HTTP/1.1 200 OK'],
    ['Content-Type: text/xml; charset=utf-8'],
    LENGTH,
    [],
    [XML_DECLARATION],
    ...nodeLines({ ...root, xmlns: namespace }, 0),
  ]);
}

function httpGetSample(op: OperationSpec, target: SampleTarget): BindingSample {
  const query: Piece[] = op.params.length === 0 ? [] : ['?', ...formPairs(op)];
  return {
    id: 'httpget',
    title: 'HTTP GET',
    request: join([[`GET ${target.path}/${op.name}`, ...query, ' HTTP/1.1'], [`Host: ${target.host}`]]),
    response: httpResponse(op, target.namespace),
  };
}

function httpPostSample(op: OperationSpec, target: SampleTarget): BindingSample {
  return {
    id: 'httppost',
    title: 'HTTP POST',
    request: join([
      [`POST ${target.path}/${op.name} HTTP/1.1`],
      [`Host: ${target.host}`],
      ['Content-Type: application/x-www-form-urlencoded'],
      LENGTH,
      [],
      formPairs(op),
    ]),
    response: httpResponse(op, target.namespace),
  };
}

function join(lines: readonly Line[]): readonly Piece[] {
  return lines.flatMap((line, i) => (i === 0 ? line : ['\n', ...line]));
}
