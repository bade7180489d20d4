import type { BindingName } from '../../src/bindings/types.js';
import { scalarOf } from '../../src/contract/scalars.js';
import { isScalarResult } from '../../src/contract/types.js';
import type { ListValue, ParamSpec, ResultValue, StructValue } from '../../src/contract/types.js';
import type { Operation } from '../../src/operations/index.js';
import { child, readTree } from '../../src/xml/xml-tree.js';
import type { XmlNode } from '../../src/xml/xml-tree.js';
import { rawRequest } from './raw-http.js';
import type { RawResponse } from './raw-http.js';

const XSI = 'http://www.w3.org/2001/XMLSchema-instance';
const ENV: Readonly<Record<'soap11' | 'soap12', string>> = {
  soap11: 'http://schemas.xmlsoap.org/soap/envelope/',
  soap12: 'http://www.w3.org/2003/05/soap-envelope',
};

/**
 * Arguments as a caller types them in a form: text (a char as its one character, an int in digits,
 * a boolean `true`), null to leave out.
 */
export type PlainArgs = Readonly<Record<string, string | null>>;

/**
 * A minimal client per binding, written from the spec (not from our code): builds the request a
 * real client sends and reads the answer back into a value, so one scenario runs over all four.
 */
export interface BindingClient {
  readonly name: BindingName;
  call(url: string, op: Operation, args: PlainArgs, ns?: string): Promise<{ res: RawResponse; value: ResultValue }>;
}

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** `withAction: false`: SOAP 1.2 as the interface document sends it, no `action` (ASMX routes by the body element). */
function soapClient(name: 'soap11' | 'soap12', withAction = true): BindingClient {
  return {
    name,
    async call(url, op, args, ns = 'http://tempuri.org/') {
      const params = op.params
        .filter((p) => args[p.name] !== null && args[p.name] !== undefined)
        .map((p) => `<${p.name}>${esc(xmlArg(p, args[p.name]!))}</${p.name}>`)
        .join('');
      const body = `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="${ENV[name]}"><soap:Body><${op.name} xmlns="${ns}">${params}</${op.name}></soap:Body></soap:Envelope>`;
      const action = `${ns}${ns.endsWith('/') ? '' : '/'}${op.name}`;
      const headers: [string, string][] =
        name === 'soap11'
          ? [
              ['Content-Type', 'text/xml; charset=utf-8'],
              ['SOAPAction', `"${action}"`],
            ]
          : [['Content-Type', `application/soap+xml; charset=utf-8${withAction ? `; action="${action}"` : ''}`]];
      const res = await rawRequest(url, { method: 'POST', path: `/${op.service}.asmx`, headers, body });
      if (res.status !== 200) return { res, value: undefined };
      const envelope = readTree(res.body.toString('utf8'));
      const resp = child(child(envelope, 'Body')!, `${op.name}Response`)!;
      const result = child(resp, `${op.name}Result`);
      return { res, value: readSoapResult(op, result) };
    },
  };
}

/** The typed argument in XmlConvert's form, as WSDL-driven clients send it (a char as its UTF-16 code). */
function xmlArg(p: ParamSpec, text: string): string {
  const scalar = scalarOf(p.type);
  return scalar.toXml(scalar.fromForm(text));
}

function readSoapResult(op: Operation, result: XmlNode | undefined): ResultValue {
  if (op.result.kind === 'void') return undefined;
  if (result === undefined) return null;
  if (isScalarResult(op.result)) return scalarOf(op.result.kind).fromXml(result.text);
  if (op.result.kind === 'list') return result.children.map(readStruct);
  return readStruct(result);
}

function readStruct(el: XmlNode): StructValue | null {
  if (el.attrs.get(`{${XSI}}nil`)?.value === 'true') return null;
  const out: Record<string, string> = {};
  for (const c of el.children) out[c.local] = c.text;
  return out;
}

function httpClient(name: 'httpget' | 'httppost'): BindingClient {
  return {
    name,
    async call(url, op, args) {
      const form = op.params
        .filter((p) => args[p.name] !== null && args[p.name] !== undefined)
        .map((p) => `${encodeURIComponent(p.name)}=${encodeURIComponent(args[p.name]!)}`)
        .join('&');
      const path = `/${op.service}.asmx/${op.name}`;
      const res =
        name === 'httpget'
          ? await rawRequest(url, { method: 'GET', path: `${path}?${form}` })
          : await rawRequest(url, {
              method: 'POST',
              path,
              headers: [['Content-Type', 'application/x-www-form-urlencoded']],
              body: form,
            });
      if (res.status !== 200 || op.result.kind === 'void') return { res, value: undefined };
      const root = readTree(res.body.toString('utf8'));
      if (root.attrs.get(`{${XSI}}nil`)?.value === 'true') return { res, value: null };
      if (isScalarResult(op.result)) return { res, value: scalarOf(op.result.kind).fromXml(root.text) };
      if (op.result.kind === 'list') return { res, value: root.children.map(readStruct) as ListValue };
      return { res, value: readStruct(root) };
    },
  };
}

/** SOAP 1.2 without the `action` parameter, as the interface document's own samples send it. */
export const soap12WithoutAction: BindingClient = soapClient('soap12', false);

export const bindingClients: readonly BindingClient[] = [
  soapClient('soap11'),
  soapClient('soap12'),
  httpClient('httpget'),
  httpClient('httppost'),
];
