import { scalarOf, ScalarFormatError } from '../contract/scalars.js';
import type { ArgValue, ParamType } from '../contract/types.js';
import { AsmxText, chain } from '../errors/asmx-text.js';
import { SoapFaultError, XmlReadError } from '../errors/errors.js';
import type { Operation } from '../operations/index.js';
import type { ParamText } from '../xml/envelope-reader.js';
import { emptyArgs } from './types.js';
import type { Call } from './types.js';

/**
 * Binds the children of the operation element to arguments as XmlSerializer does: by local name
 * in the service namespace, in any order, the first duplicate winning; a missing string is null,
 * an empty or nil one "", other types as their entry in the table reads them (scalars.ts). When the
 * body element is not the operation's, every argument keeps its default (null, or .NET's default of
 * a value type: 0, '\0', false), as ASMX runs the method anyway.
 */
export function bindSoapArgs(op: Operation, params: ReadonlyMap<string, ParamText> | null): Call {
  const args = emptyArgs();
  for (const p of op.params) {
    const found = params?.get(p.name);
    if (found === undefined) {
      args[p.name] = scalarOf(p.type).soapMissing;
      continue;
    }
    // ReadElementString refuses element content: an XmlException, which ASMX answers with 400.
    if (found.complex) {
      const { line, column } = found.after;
      const reason = AsmxText.Xml_UnexpectedNodeInSimpleContent();
      throw new XmlReadError(AsmxText.Xml_MessageWithErrorPosition(reason, line, column), false);
    }
    args[p.name] = readSoapValue(p.type, found);
  }
  return { op, args };
}

/**
 * A value in XmlConvert's form, white space around it allowed (scalars.ts); one that does not
 * convert gets ASMX's Client fault, with its line and column.
 */
function readSoapValue(type: ParamType, param: ParamText): ArgValue {
  try {
    return scalarOf(type).fromXml(param.nil ? '' : param.text);
  } catch (err) {
    if (err instanceof ScalarFormatError) throw valueFault(param, err.reason);
    throw err;
  }
}

function valueFault(param: ParamText, reason: string): SoapFaultError {
  const { line, column } = param.after;
  const message = chain(AsmxText.WebRequestUnableToRead(), AsmxText.XmlSerializeErrorDetails(line, column), reason);
  return new SoapFaultError('Client', message);
}
