import { AsmxText } from '../errors/asmx-text.js';
import { HttpBindingError } from '../errors/errors.js';
import { parseMediaType } from './content-type.js';
import { HttpFormBinding } from './http-form.js';
import type { Read } from './types.js';
import type { Exchange } from './types.js';
import type { ServiceRoutes } from './types.js';
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
    // The route of a known operation reads the body first (Route.wantsBody), as ASMX finds the
    // method before the form.
    if (op.params.length === 0) return { binding: this, call: { op, args: emptyArgs() } };
    const contentType = ex.header('content-type');
    if (parseMediaType(contentType).base !== 'application/x-www-form-urlencoded') {
      return this.refuse(new HttpBindingError(AsmxText.WebInvalidRequestFormatDetails(contentType ?? '')), op);
    }
    return this.bind(op, body?.toString('utf8') ?? '', routes);
  }
}

export const HTTP_POST = new HttpPost();
