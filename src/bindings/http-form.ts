import type { ResultValue } from '../contract/types.js';
import { AsmxText, chain } from '../errors/asmx-text.js';
import {
  HttpBindingError,
  InvalidArgumentError,
  OperationFailedError,
  RequestTooLargeError,
  ServiceError,
} from '../errors/errors.js';
import type { Operation } from '../operations/index.js';
import { wrapBody } from '../reply/reply.js';
import type { Reply } from '../reply/reply.js';
import { escapeHtml } from '../xml/escape.js';
import { XML_DECLARATION } from '../xml/namespaces.js';
import type { ResultWriter } from '../xml/result-writer.js';
import { bindHttpArgs, readUrlEncoded } from './http-params.js';
import type { Binding, Read } from './types.js';
import type { Exchange } from './types.js';
import type { ServiceRoutes } from './types.js';
import type { BindingName } from './types.js';

const TEXT_XML = 'text/xml; charset=utf-8';
const TEXT_PLAIN = 'text/plain; charset=utf-8';
const DOCUMENT_HEAD = `${XML_DECLARATION}\n`;
/** A void result is 200 with no body and no Content-Type at all, as ASMX answers. */
const VOID: Reply = { status: 200, contentType: null, body: '', invoked: true };

/**
 * What HTTP GET (http-get.ts) and HTTP POST (http-post.ts) share: `/X.asmx/Op` names the
 * operation (case-sensitively), fields are read as a form, a result is a bare XML document and
 * an error is 500 text/plain. Each reads its fields from its own place.
 */
export abstract class HttpFormBinding implements Binding {
  abstract readonly name: BindingName;

  abstract read(ex: Exchange, routes: ServiceRoutes, body: Buffer | null): Read;

  write(writer: ResultWriter, value: ResultValue): Reply {
    const doc = writer.httpDocument(value);
    if (doc === null) return VOID;
    return { status: 200, contentType: TEXT_XML, body: wrapBody(DOCUMENT_HEAD, doc, ''), invoked: true };
  }

  /**
   * The message HTML-encoded as .NET writes it, ending in CRLF: each message of a chain is
   * encoded, the ` ---> ` joiner is not.
   */
  fail(err: ServiceError): Reply {
    const text =
      err instanceof HttpBindingError
        ? chain(...err.messages.map(escapeHtml))
        : err instanceof OperationFailedError ||
            err instanceof RequestTooLargeError ||
            err instanceof InvalidArgumentError
          ? escapeHtml(err.message)
          : AsmxText.InternalError();
    return { status: 500, contentType: TEXT_PLAIN, body: `${text}\r\n`, invoked: err.invoked };
  }

  /** The operation the path names, or ASMX's error for a name that is not there. */
  protected operation(ex: Exchange, routes: ServiceRoutes): Operation | Read {
    const name = ex.target?.opPath ?? '';
    return routes.byName.get(name) ?? { binding: this, error: unknownMethod(routes, name) };
  }

  /** Binds read fields to the operation's arguments, or answers why they do not bind. */
  protected bind(op: Operation, fields: string, routes: ServiceRoutes): Read {
    try {
      return { binding: this, call: bindHttpArgs(op, readUrlEncoded(op, fields, routes.limits.maxFormFields)) };
    } catch (err) {
      return this.refuse(err, op);
    }
  }

  /** A ServiceError met while reading is the answer; anything else is ours, and thrown on. */
  protected refuse(err: unknown, op: Operation): Read {
    if (err instanceof ServiceError) return { binding: this, error: err, operation: op.name };
    throw err;
  }
}

/** ASMX's words for a method name that is not there, or there only in another case. */
function unknownMethod(routes: ServiceRoutes, name: string): HttpBindingError {
  const other = routes.byLowerName.get(name.toLowerCase());
  if (other !== undefined) return new HttpBindingError(AsmxText.WebInvalidMethodNameCase(name, other.name));
  return new HttpBindingError(AsmxText.WebInvalidMethodName(name));
}
