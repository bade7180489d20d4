import { scalarOf, ScalarFormatError } from '../contract/scalars.js';
import type { ArgValue, ParamType } from '../contract/types.js';
import { AsmxText } from '../errors/asmx-text.js';
import { HttpBindingError } from '../errors/errors.js';
import type { Operation } from '../operations/index.js';
import { hasXmlForbiddenChar } from '../xml/escape.js';
import { emptyArgs } from './types.js';
import type { Call } from './types.js';

/**
 * Reads `name=value&...` (a query string or a form body) as ASP.NET does: `+` is a space, UTF-8
 * percent escapes decode, an invalid byte becomes U+FFFD, a bad escape stays as typed. Only the
 * operation's own parameter names are kept (matched case-insensitively); repeated names join
 * with a comma. `maxFields` bounds the work a hostile form can cause.
 */
export function readUrlEncoded(op: Operation, raw: string, maxFields: number): Map<string, string> {
  const wanted = new Map(op.params.map((p) => [p.name.toLowerCase(), p.name]));
  const found = new Map<string, string>();
  if (raw === '' || wanted.size === 0) return found;
  let fields = 0;
  for (const pair of raw.split('&')) {
    if (pair === '') continue;
    if (++fields > maxFields) {
      throw new HttpBindingError(`The request has more than ${maxFields} form or query fields.`);
    }
    const eq = pair.indexOf('=');
    // A field without '=' is a value with a null name in ASP.NET: it binds to nothing.
    if (eq < 0) continue;
    const name = wanted.get(decodeComponent(pair.slice(0, eq)).toLowerCase());
    if (name === undefined) continue;
    const value = decodeComponent(pair.slice(eq + 1));
    const prev = found.get(name);
    found.set(name, prev === undefined ? value : `${prev},${value}`);
  }
  return found;
}

/** Binds read fields to typed arguments, with ASMX's errors for missing and unconvertible ones. */
export function bindHttpArgs(op: Operation, fields: ReadonlyMap<string, string>): Call {
  const args = emptyArgs();
  for (const p of op.params) {
    const value = fields.get(p.name);
    if (value === undefined) throw new HttpBindingError(AsmxText.WebMissingParameter(p.name));
    if (hasXmlForbiddenChar(value)) {
      // Decision 4: such a value could only produce an ill-formed answer; say so instead.
      throw new HttpBindingError(
        `Parameter ${p.name} holds a character that XML 1.0 does not allow; remove control characters from the value.`,
      );
    }
    args[p.name] = readFormValue(p.type, value);
  }
  return { op, args };
}

/** Convert.ChangeType(value, type, InvariantCulture) as scalars.ts reads it, with ASMX's message when it fails. */
function readFormValue(type: ParamType, value: string): ArgValue {
  const scalar = scalarOf(type);
  try {
    return scalar.fromForm(value);
  } catch (err) {
    if (!(err instanceof ScalarFormatError)) throw err;
    throw new HttpBindingError(AsmxText.WebChangeTypeFailed(value, scalar.dotNet), err.reason);
  }
}

const PERCENT_RUN = /(?:%[0-9A-Fa-f]{2})+/g;

function decodeComponent(text: string): string {
  const spaced = text.includes('+') ? text.replace(/\+/g, ' ') : text;
  if (!spaced.includes('%')) return spaced;
  // Each run of escapes is decoded as UTF-8 bytes; invalid sequences become U+FFFD.
  return spaced.replace(PERCENT_RUN, (run) => {
    const bytes = Buffer.from(run.replace(/%/g, ''), 'hex');
    return new TextDecoder('utf-8').decode(bytes);
  });
}
