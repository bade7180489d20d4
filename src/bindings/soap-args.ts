import { SoapFaultError, UNABLE_TO_READ, XmlReadError } from '../errors/errors.js';
import type { Operation } from '../operations/index.js';
import type { ParamText } from '../xml/envelope-reader.js';
import { emptyArgs } from './types.js';
import type { Call } from './types.js';

const XML_WS = /^[ \t\r\n]+|[ \t\r\n]+$/g;

/**
 * Binds the children of the operation element to arguments as XmlSerializer does: by local name
 * in the service namespace, in any order, the first duplicate winning; a missing string is null,
 * an empty or nil one "". When the body element is not the operation's, every argument keeps its
 * default (null, or '\0' for a char), as ASMX runs the method anyway.
 */
export function bindSoapArgs(op: Operation, params: ReadonlyMap<string, ParamText> | null): Call {
  const args = emptyArgs();
  for (const p of op.params) {
    const found = params?.get(p.name);
    if (found === undefined) {
      args[p.name] = p.type === 'char' ? 0 : null;
      continue;
    }
    // ReadElementString refuses element content: an XmlException, which ASMX answers with 400.
    if (found.complex) {
      throw new XmlReadError(
        `ReadElementString method can only be called on elements with simple or empty content. Line ${found.after.line}, position ${found.after.column}.`,
        false,
      );
    }
    args[p.name] = p.type === 'char' ? readSoapChar(found) : found.nil ? '' : found.text;
  }
  return { op, args };
}

/**
 * A SOAP `char` is an xs:unsignedShort: the UTF-16 code, XML white space around it allowed
 * (`49` is '1'). Decision 8: a single non-digit character is also taken literally (`Y`), where
 * ASMX faults. Everything else gets ASMX's Client fault, with its line and column.
 */
function readSoapChar(param: ParamText): number {
  const value = param.nil ? '' : param.text.replace(XML_WS, '');
  if (/^[0-9]+$/.test(value)) {
    const n = Number(value);
    if (n <= 0xffff) return n;
    throw charFault(param, 'Value was either too large or too small for a UInt16.');
  }
  if (value.length === 1 && !param.nil) return value.charCodeAt(0);
  throw charFault(param, 'Input string was not in a correct format.');
}

function charFault(param: ParamText, reason: string): SoapFaultError {
  const { line, column } = param.after;
  return new SoapFaultError(
    'Client',
    `${UNABLE_TO_READ} ---> There is an error in XML document (${line}, ${column}). ---> ${reason}`,
  );
}
