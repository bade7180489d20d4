import { describe, it } from 'node:test';
import {
  assertAuthCodes,
  assertCalls,
  assertExtendedReport,
  assertReport,
  missingPythonModule,
  parseReport,
  runPythonClient,
  seconds,
  useScenarioServer,
} from './client-scenario.js';
import { ALL_OPERATIONS, EXTENDED_OPERATIONS } from './scenarios.js';

/** Why the client cannot run here, or null when it can (read once: every test skips alike). */
const MISSING = missingPythonModule('suds.client', 'python3-suds');

describe('suds (python3-suds) from the live WSDL', () => {
  const ctx = useScenarioServer();

  it('calls every operation over the SOAP 1.1 port', { timeout: 120_000, skip: MISSING ?? false }, async (t) => {
    const { stdout, ms } = await runPythonClient('suds', ctx.url);
    t.diagnostic(`suds client: ${seconds(ms)}`);
    assertReport(parseReport(stdout), ['soap11'], ['soap11']);
    assertCalls(ctx.proxy, { soap11: ALL_OPERATIONS });
    assertAuthCodes(ctx.server, 'suds', ['soap11']);
  });
});

describe('suds from the live WSDL, SIS_RESULTS=extended', () => {
  const ctx = useScenarioServer({ extended: true });

  it('reads marks and push settings over the SOAP 1.1 port', { timeout: 120_000, skip: MISSING ?? false }, async () => {
    const { stdout } = await runPythonClient('suds', ctx.url, 'extended');
    // suds, like zeep, reads the empty Note (an empty element) as None.
    assertExtendedReport(parseReport(stdout), ['soap11'], { emptyIsMissing: true });
    assertCalls(ctx.proxy, { soap11: EXTENDED_OPERATIONS });
  });
});
