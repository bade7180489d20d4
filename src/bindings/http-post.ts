import { AsmxText } from '../errors/asmx-text.js';
import { HttpBindingError } from '../errors/errors.js';
import type { Read } from './binding.js';
import { parseMediaType } from './content-type.js';
import type { Exchange } from './exchange.js';
import { HttpFormBinding } from './http-form.js';
import type { ServiceRoutes } from './service-routes.js';
import { emptyArgs } from './types.js';

/**
 * HTTP POST (`POST /X.asmx/Op`): parameters come from an application/x-www-form-urlencoded body
 * only; the query string is ignored. An operation without parameters reads nothing, so any
 * content type works.
 */
class HttpPost extends HttpFormBinding {
  readonly name = 'httppost';

  read(ex: Exchange, routes: ServiceRoutes, body: Buffer | null): Read {
    const op = this.operation(ex, routes);
    if ('binding' in op) return op;
    // The operation is known before the body is read, as ASMX finds the method before the form.
    if (body === null) return this.wantsBody(op);
    if (op.params.length === 0) return { binding: this, call: { op, args: emptyArgs() } };
    const contentType = ex.header('content-type');
    if (parseMediaType(contentType).base !== 'application/x-www-form-urlencoded') {
      return this.refuse(new HttpBindingError(AsmxText.WebInvalidRequestFormatDetails(contentType ?? '')), op);
    }
    return this.bind(op, body.toString('utf8'), routes);
  }
}

export const HTTP_POST = new HttpPost();
