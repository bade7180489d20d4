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
import { ALL_OPERATIONS, EXTENDED_OPERATIONS, VALUE_OPERATIONS } from './scenarios.js';

/** Why the client cannot run here, or null when it can (read once: every test skips alike). */
const MISSING = missingPythonModule('zeep', 'python3-zeep');

describe('zeep (python3-zeep) from the live WSDL', () => {
  const ctx = useScenarioServer();

  it(
    'calls every operation over SOAP 1.1 and SOAP 1.2, and the value operations over HttpGet and HttpPost',
    { timeout: 120_000, skip: MISSING ?? false },
    async (t) => {
      const { stdout, ms } = await runPythonClient('zeep', ctx.url);
      t.diagnostic(`zeep client: ${seconds(ms)}`);
      assertReport(parseReport(stdout), ['soap11', 'soap12', 'httpget', 'httppost'], ['soap11', 'soap12']);
      assertCalls(ctx.proxy, {
        soap11: ALL_OPERATIONS,
        soap12: ALL_OPERATIONS,
        httpget: VALUE_OPERATIONS,
        httppost: VALUE_OPERATIONS,
      });
      assertAuthCodes(ctx.server, 'zeep', ['soap11', 'soap12']);
    },
  );
});

describe('zeep from the live WSDL, SIS_RESULTS=extended', () => {
  const ctx = useScenarioServer({ extended: true });

  it(
    'reads marks and push settings over SOAP 1.1 and SOAP 1.2',
    { timeout: 120_000, skip: MISSING ?? false },
    async () => {
      const { stdout } = await runPythonClient('zeep', ctx.url, 'extended');
      // zeep reads the empty Note (an empty element) as None, like a field left out.
      assertExtendedReport(parseReport(stdout), ['soap11', 'soap12'], { emptyIsMissing: true });
      assertCalls(ctx.proxy, { soap11: EXTENDED_OPERATIONS, soap12: EXTENDED_OPERATIONS });
    },
  );
});
