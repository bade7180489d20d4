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
  VALUE_OPERATIONS,
} from './client-scenario.js';

const PYTHON = '/usr/bin/python3';

/** Why the client cannot run here, or null when it can. */
function missing(): string | null {
  const probe = spawnSync(PYTHON, ['-c', 'import zeep'], { encoding: 'utf8' });
  if (probe.error !== undefined || probe.status !== 0) return `zeep not found for ${PYTHON}: install python3-zeep`;
  return null;
}

describe('zeep (python3-zeep) from the live WSDL', () => {
  const ctx = useScenarioServer();

  it('calls every operation over SOAP 1.1 and SOAP 1.2, and the value operations over HttpGet and HttpPost', { timeout: 120_000 }, async (t) => {
    const reason = missing();
    if (reason !== null) {
      t.skip(reason);
      return;
    }
    const { stdout, ms } = await run(PYTHON, [clientSource('zeep', 'client.py'), ctx.url, 'zeep', PHONE], { env: { PYTHONIOENCODING: 'utf-8' } });
    t.diagnostic(`zeep client: ${seconds(ms)}`);
    assertReport(parseReport(stdout), ['soap11', 'soap12', 'httpget', 'httppost'], ['soap11', 'soap12']);
    assertCalls(ctx.proxy, { soap11: ALL_OPERATIONS, soap12: ALL_OPERATIONS, httpget: VALUE_OPERATIONS, httppost: VALUE_OPERATIONS });
    assertAuthCodes(ctx.server, 'zeep', ['soap11', 'soap12']);
  });
});

describe('zeep from the live WSDL, SIS_RESULTS=extended', () => {
  const ctx = useScenarioServer({ extended: true });

  it('reads marks and push settings over SOAP 1.1 and SOAP 1.2', { timeout: 120_000 }, async (t) => {
    const reason = missing();
    if (reason !== null) {
      t.skip(reason);
      return;
    }
    const { stdout } = await run(PYTHON, [clientSource('zeep', 'client.py'), ctx.url, 'zeep', PHONE, 'extended'], { env: { PYTHONIOENCODING: 'utf-8' } });
    // zeep reads the empty Note (an empty element) as None, like a field left out.
    assertExtendedReport(parseReport(stdout), ['soap11', 'soap12'], { emptyIsMissing: true });
  });
});
