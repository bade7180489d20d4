/** The namespaces and escaping ASMX uses, for the benchmark's requests and expected answers. */

export const NS = 'http://tempuri.org/';
export const DECL = '<?xml version="1.0" encoding="utf-8"?>';
export const SOAP11_NS = 'http://schemas.xmlsoap.org/soap/envelope/';
export const SOAP12_NS = 'http://www.w3.org/2003/05/soap-envelope';
export const XSI = 'http://www.w3.org/2001/XMLSchema-instance';
export const XSD = 'http://www.w3.org/2001/XMLSchema';

/** Element text as ASMX escapes it: `&`, `<` and `>` only. */
export const xmlText = (v: string): string => v.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
