/**
 * One value per service × operation × binding, found through nested maps keyed by the outcome's
 * own names: the contract's strings, whose hashes V8 keeps, so a lookup builds no key per request
 * (a joined key string is new each time and hashed each time). Used by the request metrics and
 * the access log; the names are never what a request spelled, so the tree stays small.
 */
export class RouteTree<T> {
  readonly #root = new Map<string, Map<string, Map<string, T>>>();

  /** `make` is called once per route, on its first request. */
  constructor(private readonly make: (service: string, operation: string, binding: string) => T) {}

  get(service: string, operation: string, binding: string): T {
    let operations = this.#root.get(service);
    if (operations === undefined) this.#root.set(service, (operations = new Map()));
    let bindings = operations.get(operation);
    if (bindings === undefined) operations.set(operation, (bindings = new Map()));
    let value = bindings.get(binding);
    if (value === undefined) bindings.set(binding, (value = this.make(service, operation, binding)));
    return value;
  }
}
