import type { OperationSpec, ParamSpec, ResultSpec, ServiceSpec } from './types.js';

/** Identity with inference: `params` keep their literal names so `run` gets typed arguments. */
export function defineOperation<const P extends readonly ParamSpec[], const R extends ResultSpec, C>(
  spec: OperationSpec<P, R, C>,
): OperationSpec<P, R, C> {
  return spec;
}

/** Groups operations by service file, in declaration order (the order WSDL and help pages list them). */
export function groupServices<C>(
  operations: readonly OperationSpec<readonly ParamSpec[], ResultSpec, C>[],
): readonly ServiceSpec<C>[] {
  const byName = new Map<string, OperationSpec<readonly ParamSpec[], ResultSpec, C>[]>();
  for (const op of operations) {
    const list = byName.get(op.service) ?? [];
    if (list.some((o) => o.name === op.name)) {
      throw new Error(`Operation ${op.service}.${op.name} is described twice`);
    }
    list.push(op);
    byName.set(op.service, list);
  }
  return [...byName].map(([name, ops]) => ({ name, operations: ops }));
}
