import { HttpFormBinding } from './http-form.js';
import type { Read } from './types.js';
import type { Exchange } from './types.js';
import type { ServiceRoutes } from './types.js';

/** HTTP GET (`GET /X.asmx/Op?a=1`): parameters come from the query string only. */
class HttpGet extends HttpFormBinding {
  readonly name = 'httpget';

  read(ex: Exchange, routes: ServiceRoutes): Read {
    const op = this.operation(ex, routes);
    if ('binding' in op) return op;
    return this.bind(op, ex.target?.query ?? '', routes);
  }
}

export const HTTP_GET = new HttpGet();
