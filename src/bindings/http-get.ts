import type { Read } from './binding.js';
import type { Exchange } from './exchange.js';
import { HttpFormBinding } from './http-form.js';
import type { ServiceRoutes } from './service-routes.js';

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
