import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createClientAsync } from 'soap';
import type { Client } from 'soap';
import {
  assertAuthCodes,
  assertExtendedReport,
  assertCalls,
  assertReport,
  seconds,
  useScenarioServer,
} from './client-scenario.js';
import { ALL_OPERATIONS, EXTENDED_OPERATIONS, PHONE, SCHOOL, SPECIAL_ID } from './scenarios.js';
import type { PortReport } from './scenarios.js';

type PortMethod = (args: object, callback: (err: unknown, result: unknown) => void) => void;

/** One operation of one port, as node-soap generated it from the WSDL. */
function operation(client: Client, service: string, port: string, op: string): (args: object) => Promise<unknown> {
  const fn: unknown = client[service]?.[port]?.[op];
  assert.equal(typeof fn, 'function', `node-soap built ${service}.${port}.${op} from the WSDL`);
  return (args) =>
    new Promise((resolve, reject) => {
      (fn as PortMethod)(args, (err, result) =>
        err ? reject(err instanceof Error ? err : new Error(String(err))) : resolve(result),
      );
    });
}

const students = (result: unknown): unknown =>
  (result as { GetStudentSchoolResult?: { StudentInfo?: unknown } | null } | null)?.GetStudentSchoolResult
    ?.StudentInfo ?? null;
const token = (result: unknown): unknown =>
  (result as { GetTokenDeviceResult?: unknown } | null)?.GetTokenDeviceResult ?? null;

describe('node-soap from the live WSDL', () => {
  const ctx = useScenarioServer();

  for (const [key, suffix, soap12] of [
    ['soap11', 'Soap', false],
    ['soap12', 'Soap12', true],
  ] as const) {
    it(
      `calls every operation over the ${suffix} port${soap12 ? ' (forceSoap12Headers)' : ''}`,
      { timeout: 60_000 },
      async (t) => {
        ctx.proxy.exchanges.length = 0;
        const started = Date.now();
        const port = async (service: string): Promise<(op: string) => (args: object) => Promise<unknown>> => {
          const client = await createClientAsync(`${ctx.url}/${service}.asmx?WSDL`, { forceSoap12Headers: soap12 });
          return (op) => operation(client, service, service + suffix, op);
        };
        const notes = await port('NotificationNotes');
        const push = await port('PushNotificationMobile');
        const auth = await port('AuthCodeSending');
        const marks = await port('GetStudnetsMarks');
        const school = notes('GetStudentSchool');
        const tokenOf = push('GetTokenDevice');
        // The WSDL types show_active as s1:char, an unsignedShort: the UTF-16 code, not the character.
        const report: PortReport = {
          active: students(await school({ school_base_url: SCHOOL, show_active: '1'.charCodeAt(0) })),
          inactive: students(await school({ school_base_url: SCHOOL, show_active: '0'.charCodeAt(0) })),
          known: token(await tokenOf({ id: '1' })),
          unknown: token(await tokenOf({ id: 'no-such-device' })),
          special: token(await tokenOf({ id: 'esc' })),
          specialId: token(await tokenOf({ id: SPECIAL_ID })),
          authCode: await auth('AuthCode')({ code: `node-soap-${key}`, phone: PHONE }),
          marks: await marks('GetStudentsMarks')({ StudnetID: '1', SubjectID: 'math' }),
          serverKey: await push('GetServerKeyAndSender')({}),
        };
        // The pitfall itself, as ASMX has it: the character '1' as text is read as the number 1 (U+0001), which matches nobody.
        assert.equal(
          students(await school({ school_base_url: SCHOOL, show_active: '1' })),
          null,
          "show_active '1' sent as text matches no student",
        );
        t.diagnostic(`node-soap ${key}: ${seconds(Date.now() - started)}`);
        assertReport({ [key]: report }, [key], [key]);
        assertCalls(ctx.proxy, { [key]: ALL_OPERATIONS });
        assertAuthCodes(ctx.server, 'node-soap', [key]);
      },
    );
  }
});

const marks = (result: unknown): unknown => {
  const list =
    (result as { GetStudentsMarksResult?: { Mark?: unknown } | null } | null)?.GetStudentsMarksResult?.Mark ?? null;
  return list === null || Array.isArray(list) ? list : [list];
};
const pushSettings = (result: unknown): unknown =>
  (result as { GetServerKeyAndSenderResult?: unknown } | null)?.GetServerKeyAndSenderResult ?? null;

describe('node-soap from the live WSDL, SIS_RESULTS=extended', () => {
  const ctx = useScenarioServer({ extended: true });

  it('reads marks and push settings over the Soap and Soap12 ports', { timeout: 60_000 }, async () => {
    const report: Record<string, PortReport> = {};
    for (const [key, suffix, soap12] of [
      ['soap11', 'Soap', false],
      ['soap12', 'Soap12', true],
    ] as const) {
      const client = async (service: string): Promise<Client> =>
        createClientAsync(`${ctx.url}/${service}.asmx?WSDL`, { forceSoap12Headers: soap12 });
      const marksOp = operation(
        await client('GetStudnetsMarks'),
        'GetStudnetsMarks',
        `GetStudnetsMarks${suffix}`,
        'GetStudentsMarks',
      );
      const pushOp = operation(
        await client('PushNotificationMobile'),
        'PushNotificationMobile',
        `PushNotificationMobile${suffix}`,
        'GetServerKeyAndSender',
      );
      report[key] = {
        math: marks(await marksOp({ StudnetID: '1', SubjectID: 'math' })),
        all: marks(await marksOp({ StudnetID: '1', SubjectID: '' })),
        serverKey: pushSettings(await pushOp({})),
      };
    }
    assertExtendedReport(report, ['soap11', 'soap12']);
    assertCalls(ctx.proxy, { soap11: EXTENDED_OPERATIONS, soap12: EXTENDED_OPERATIONS });
  });
});
