/**
 * Ours beside the legacy service, which does the writes (legacy mode, `sis shadow replay`): a dry
 * run cannot write, whatever the operation remembers. Its context says `dryRun`, and its store is
 * a view that has only the reads: any other method (a write, or one added to the Store later) is
 * refused, so an operation that forgets `dryRun` fails, visibly, instead of writing twice. The one
 * write with a dry form, AuthCode's `acceptAuthCode`, is let through only when asked as a dry run;
 * the SMS guard is asked only for a dry admission (every check, nothing counted).
 */
import type { OperationContext } from '../operations/context.js';
import type { AdmitRequest, SmsGuard } from '../sms/sms-guard.js';
import { methodNames } from '../store/forward-store.js';
import type { AuthCodeRequest, Store } from '../store/store.js';

/** The Store's reads: a dry run may call these, and no other method. */
const READS = new Set([
  'studentsOfSchool',
  'studentsOfSchoolPages',
  'deviceToken',
  'marksOf',
  'pushSettings',
  'isEmpty',
  'dataVersion',
  'ping',
]);

/** A write asked of the dry run's store: the operation did not honour `dryRun`. */
export class DryRunWriteError extends Error {
  constructor(method: string) {
    super(
      `a dry run may not write (Store.${method}) beside the legacy service: the operation must check ctx.dryRun and only validate`,
    );
    this.name = 'DryRunWriteError';
  }
}

/** The dry run's context: `dryRun`, a store with the reads only, the SMS guard asked for dry admissions only. */
export function dryRunContext(context: OperationContext, refused: (err: DryRunWriteError) => void): OperationContext {
  const sms = context.sms === undefined ? {} : { sms: dryGuard(context.sms) };
  return { ...context, ...sms, dryRun: true, store: readOnlyStore(context.store, refused) };
}

/** A view of `store` with its reads; every other method throws (or rejects with) DryRunWriteError. */
export function readOnlyStore(store: Store, refused: (err: DryRunWriteError) => void = () => undefined): Store {
  const view: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  const methods = store as unknown as Record<string, (...args: unknown[]) => unknown>;
  const refuse = (name: string): never => {
    const err = new DryRunWriteError(name);
    refused(err);
    throw err;
  };
  for (const name of methodNames(store)) {
    if (READS.has(name)) view[name] = methods[name]!.bind(store);
    else if (name === 'acceptAuthCode')
      view[name] = (request: AuthCodeRequest) =>
        request.dryRun === true ? store.acceptAuthCode(request) : Promise.reject(caught(() => refuse(name)));
    else view[name] = async () => refuse(name);
  }
  return view as unknown as Store;
}

/** The guard, its admissions always dry: a view on the guard, its other members the guard's own. */
function dryGuard(guard: SmsGuard): SmsGuard {
  const view = Object.create(guard) as SmsGuard;
  return Object.assign(view, { admit: (request: AdmitRequest) => guard.admit({ ...request, dryRun: true }) });
}

function caught(run: () => never): unknown {
  try {
    return run();
  } catch (err) {
    return err;
  }
}
