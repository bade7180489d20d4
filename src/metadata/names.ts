/**
 * Names the metadata documents derive from the contract, each rule in one place so WSDL, disco
 * and help pages cannot disagree.
 */
import { isScalarName, scalarOf } from '../contract/scalars.js';
import type { ScalarName } from '../contract/scalars.js';
import type { OperationSpec, ResultSpec } from '../contract/types.js';

export const WSDL_NS = 'http://schemas.xmlsoap.org/wsdl/';
export const WSDL_SOAP_NS = 'http://schemas.xmlsoap.org/wsdl/soap/';
export const WSDL_SOAP12_NS = 'http://schemas.xmlsoap.org/wsdl/soap12/';
export const WSDL_HTTP_NS = 'http://schemas.xmlsoap.org/wsdl/http/';
export const WSDL_MIME_NS = 'http://schemas.xmlsoap.org/wsdl/mime/';
export const TEXT_MATCHING_NS = 'http://microsoft.com/wsdl/mime/textMatching/';
export const SOAP_ENCODING_NS = 'http://schemas.xmlsoap.org/soap/encoding/';
/** Where ASMX defines the simple types XSD lacks (`char`, `guid`). */
export const MS_TYPES_NS = 'http://microsoft.com/wsdl/types/';
export const SOAP_HTTP_TRANSPORT = 'http://schemas.xmlsoap.org/soap/http';

export { soapAction } from '../contract/soap-action.js';

/** The XmlSerializer root name of a result as HTTP GET/POST write it; null when there is no body. */
export function httpResultElementName(result: ResultSpec): string | null {
  switch (result.kind) {
    case 'void':
      return null;
    case 'list':
      return arrayTypeName(result.item.name);
    case 'struct':
      return result.struct.name;
    default:
      return scalarOf(result.kind).element;
  }
}

export function arrayTypeName(itemName: string): string {
  return `ArrayOf${itemName}`;
}

/**
 * The types of ASMX's own namespace (`s1:char`) a service's parameters or results use, each once,
 * in the order first met: the WSDL declares `xmlns:s1` and defines them only when there are some.
 */
export function ownTypesUsed(operations: readonly OperationSpec[]): readonly ScalarName[] {
  const used = new Set<ScalarName>();
  const meet = (type: string): void => {
    if (isScalarName(type) && scalarOf(type).restricts !== undefined) used.add(type);
  };
  for (const op of operations) {
    for (const p of op.params) meet(p.type);
    meet(op.result.kind);
  }
  return [...used];
}
