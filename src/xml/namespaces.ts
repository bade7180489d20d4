/** Namespace URIs of the SOAP and XML Schema worlds, fixed by their specifications. */
export const SOAP11_ENVELOPE_NS = 'http://schemas.xmlsoap.org/soap/envelope/';
export const SOAP12_ENVELOPE_NS = 'http://www.w3.org/2003/05/soap-envelope';
export const XSI_NS = 'http://www.w3.org/2001/XMLSchema-instance';
export const XSD_NS = 'http://www.w3.org/2001/XMLSchema';
export const XML_DECLARATION = '<?xml version="1.0" encoding="utf-8"?>';
