/**
 * One target started alone for one scenario, with node flags of the caller's (a profiler, or
 * valgrind in front of node): what profile.ts and instructions.ts measure.
 */
import { join } from 'node:path';
import type { Scenario, TargetName } from '../scenarios/scenario.js';
import { fetchWsdl, startCeiling, startNecessary, startOurs, startPeer } from './servers.js';
import type { Launch, Server } from './servers.js';

export interface TargetStart {
  readonly target: TargetName;
  readonly scenario: Scenario;
  readonly core: string | null;
  /** The SQLite file the scenario's data is in. */
  readonly db: string;
  readonly work: string;
  readonly nodeFlags: readonly string[];
  /** A command put in front of node (e.g. valgrind and its options). */
  readonly wrapper?: readonly string[];
  readonly upTimeoutMs?: number;
}

export async function startTarget(t: TargetStart): Promise<Server> {
  const { target, scenario: s, core, db, work, nodeFlags } = t;
  if (target === 'node-soap' && s.peerPath === undefined) throw new Error(`node-soap does not serve ${s.binding}`);
  if (target === 'necessary' && s.necessary === undefined) throw new Error(`no necessary-work route for ${s.id}`);
  const launch: Launch = {
    nodeFlags,
    ...(t.wrapper === undefined ? {} : { wrapper: t.wrapper }),
    ...(t.upTimeoutMs === undefined ? {} : { upTimeoutMs: t.upTimeoutMs }),
  };
  if (target === 'ours' || target === 'ours-silent')
    return startOurs(core, db, join(work, 'ours.log'), { silent: target === 'ours-silent', ...launch });
  if (target === 'ceiling') return startCeiling(core, [s], work, launch);
  if (target === 'necessary') return startNecessary(core, [s], db, work, launch);
  // node-soap serves our WSDL: fetch it from a short-lived instance of ours.
  const ours = await startOurs(core, db, join(work, 'ours.log'), { silent: true });
  await fetchWsdl(ours, join(work, 'wsdl')).finally(() => ours.child.stop());
  return startPeer(core, db, join(work, 'wsdl'), launch);
}
