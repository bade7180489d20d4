import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import {
  ALL_OPERATIONS,
  assertAuthCodes,
  assertCalls,
  assertExtendedReport,
  assertReport,
  clientSource,
  parseReport,
  PHONE,
  run,
  seconds,
  useScenarioServer,
} from './client-scenario.js';

const PYTHON = '/usr/bin/python3';

/** Why the client cannot run here, or null when it can. */
function missing(): string | null {
  const probe = spawnSync(PYTHON, ['-c', 'import suds.client'], { encoding: 'utf8' });
  if (probe.error !== undefined || probe.status !== 0) return `suds not found for ${PYTHON}: install python3-suds`;
  return null;
}

describe('suds (python3-suds) from the live WSDL', () => {
  const ctx = useScenarioServer();

  it('calls every operation over the SOAP 1.1 port', { timeout: 120_000 }, async (t) => {
    const reason = missing();
    if (reason !== null) {
      t.skip(reason);
      return;
    }
    const { stdout, ms } = await run(PYTHON, [clientSource('suds', 'client.py'), ctx.url, 'suds', PHONE], { env: { PYTHONIOENCODING: 'utf-8' } });
    t.diagnostic(`suds client: ${seconds(ms)}`);
    assertReport(parseReport(stdout), ['soap11'], ['soap11']);
    assertCalls(ctx.proxy, { soap11: ALL_OPERATIONS });
    assertAuthCodes(ctx.server, 'suds', ['soap11']);
  });
});

describe('suds from the live WSDL, SIS_RESULTS=extended', () => {
  const ctx = useScenarioServer({ extended: true });

  it('reads marks and push settings over the SOAP 1.1 port', { timeout: 120_000 }, async (t) => {
    const reason = missing();
    if (reason !== null) {
      t.skip(reason);
      return;
    }
    const { stdout } = await run(PYTHON, [clientSource('suds', 'client.py'), ctx.url, 'suds', PHONE, 'extended'], { env: { PYTHONIOENCODING: 'utf-8' } });
    // suds, like zeep, reads the empty Note (an empty element) as None.
    assertExtendedReport(parseReport(stdout), ['soap11'], { emptyIsMissing: true });
  });
});
