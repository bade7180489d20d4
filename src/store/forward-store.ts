/**
 * The one forwarder behind every Store decorator (counting calls, waiting for a background open)
 * and the test fakes: an object whose every method calls the same method of the store it wraps,
 * through one `around` function. A new Store method is written once, in the interface and its
 * implementations; no decorator needs an edit.
 */

/** Runs one forwarded call: `call` invokes the wrapped store's method with the caller's arguments. */
export type Around = (call: () => unknown, name: string) => unknown;

type AnyMethod = (...args: unknown[]) => unknown;

const direct: Around = (call) => call();

/** The names of the methods of `shape` and its prototypes (classes' methods are not own properties). */
export function methodNames(shape: object): string[] {
  const names = new Set<string>();
  for (
    let o: object | null = shape;
    o !== null && o !== Object.prototype;
    o = Object.getPrototypeOf(o) as object | null
  ) {
    for (const name of Object.getOwnPropertyNames(o)) {
      // The descriptor, not the property: reading a getter on a prototype would run it there.
      if (name !== 'constructor' && typeof Object.getOwnPropertyDescriptor(o, name)?.value === 'function')
        names.add(name);
    }
  }
  return [...names];
}

/**
 * Forwards every method of `shape` (a store, or a class's prototype when the store is not there
 * yet) to `target()`, the store at the time of the call, through `around`.
 */
export function forwardMethods<T extends object>(shape: object, target: () => object, around: Around = direct): T {
  const out: Record<string, AnyMethod> = Object.create(null) as Record<string, AnyMethod>;
  for (const name of methodNames(shape)) {
    out[name] = (...args: unknown[]) =>
      around(() => {
        const store = target() as Record<string, AnyMethod>;
        return store[name]!.apply(store, args);
      }, name);
  }
  return out as unknown as T;
}

/**
 * A store like `inner` with some methods replaced (tests: a store that fails on one call). Its own
 * members that are not methods (a SqlStore's `retention`, `admin`...) are those of `inner`.
 */
export function withOverrides<T extends object>(inner: T, overrides: Partial<T>): T {
  const members = Object.entries(inner).filter(([, value]) => typeof value !== 'function');
  return Object.assign(
    forwardMethods<T>(inner, () => inner),
    Object.fromEntries(members),
    overrides,
  );
}
