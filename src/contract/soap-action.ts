/**
 * ASMX's SOAPAction for an operation (SoapReflector's rule): the service namespace, a `/` unless
 * it already ends with one, then the operation name. Routing, WSDL and help pages all use it.
 */
export function soapAction(namespace: string, operationName: string): string {
  return namespace.endsWith('/') ? namespace + operationName : `${namespace}/${operationName}`;
}
