/**
 * What the real clients (zeep, suds, gSOAP, JAX-WS, node-soap) do with each operation of the
 * contract, and what they must report back: one scenario per operation, keyed by its name. The
 * table is checked against the contract when every client test starts (`scenarioProblems`), and
 * the calls each client must be seen making are the contract's operations: an operation added to
 * src/operations/ without a scenario here, and a call in every client, fails the client tests.
 */
import { operations, operationsFor } from '../../src/operations/index.js';
import type { Operation } from '../../src/operations/index.js';
import type { Dataset } from '../../src/store/store.js';

export const SCHOOL = 'http://school-a.example';
export const KNOWN_ID = '1';
export const KNOWN_TOKEN = 'tok-AAA-111';
export const UNKNOWN_ID = 'no-such-device';
export const SPECIAL_TOKEN_ID = 'esc';
export const SPECIAL_TOKEN = 'a<b & c>"d" \'e\' éè علي 😀 ]]>';
/** An id that itself needs escaping, so the client's request encoding is exercised too. */
export const SPECIAL_ID = 'k&<é>"\'';
export const SPECIAL_ID_TOKEN = 'tok-special-id';
/**
 * The phone every AuthCode call sends, with the spaces and dashes people type; the code is
 * `<client>-<port>` so each call is traceable in the store. (Special characters travel in SPECIAL_ID.)
 */
export const PHONE = '+1 555-0100-777';
/** The phone as AuthCode stores it: spaces and dashes removed. */
export const STORED_PHONE = '+15550100777';

export const dataset: Dataset = {
  students: [
    { id_student: '1', fullName: "O'Brien & <Sons>", id_device: 'dev-001', ShowActive: '1', school_base_url: SCHOOL },
    { id_student: '2', fullName: 'Zoë Ångström', id_device: 'dev-002', ShowActive: '1', school_base_url: SCHOOL },
    { id_student: '3', fullName: 'علي', id_device: 'dev-003', ShowActive: '0', school_base_url: SCHOOL },
    {
      id_student: '4',
      fullName: 'Elsewhere',
      id_device: 'dev-004',
      ShowActive: '1',
      school_base_url: 'http://school-b.example',
    },
  ],
  devices: [
    { id: KNOWN_ID, token: KNOWN_TOKEN },
    { id: SPECIAL_TOKEN_ID, token: SPECIAL_TOKEN },
    { id: SPECIAL_ID, token: SPECIAL_ID_TOKEN },
  ],
};

/** GetStudentSchool(SCHOOL, '1'): two students, in import order. */
export const ACTIVE = [
  { id_student: '1', fullName: "O'Brien & <Sons>", id_device: 'dev-001', ShowActive: '1' },
  { id_student: '2', fullName: 'Zoë Ångström', id_device: 'dev-002', ShowActive: '1' },
] as const;
/** GetStudentSchool(SCHOOL, '0'): a one-item list, which some clients are tempted to flatten. */
export const INACTIVE = [{ id_student: '3', fullName: 'علي', id_device: 'dev-003', ShowActive: '0' }] as const;

/** SIS_RESULTS=extended: the scenario's data plus marks and push settings that need escaping too. */
export const extendedDataset: Dataset = {
  ...dataset,
  marks: [
    {
      id_student: '1',
      SubjectID: 'math',
      SubjectName: 'Mathematics',
      Mark: 'A',
      Term: 'T1',
      MarkDate: '2024-03-14',
      Note: 'Algebra & <geometry> é',
    },
    {
      id_student: '1',
      SubjectID: 'lit',
      SubjectName: 'Literature',
      Mark: 'B+',
      Term: 'T1',
      MarkDate: '2024-03-20',
      Note: null,
    },
    {
      id_student: '1',
      SubjectID: 'math',
      SubjectName: 'Mathematics',
      Mark: 'A-',
      Term: 'T2',
      MarkDate: '2024-06-11',
      Note: '',
    },
  ],
  push: { ServerKey: 'AAAA:key&<"é">', SenderId: '123456789012' },
};

/** GetStudentsMarks('1', 'math') in extended mode: import order; a null Note is left out, an empty one kept. */
export const MATH_MARKS = [
  {
    id_student: '1',
    SubjectID: 'math',
    SubjectName: 'Mathematics',
    Mark: 'A',
    Term: 'T1',
    MarkDate: '2024-03-14',
    Note: 'Algebra & <geometry> é',
  },
  {
    id_student: '1',
    SubjectID: 'math',
    SubjectName: 'Mathematics',
    Mark: 'A-',
    Term: 'T2',
    MarkDate: '2024-06-11',
    Note: '',
  },
];
/** GetStudentsMarks('1', '') in extended mode: every subject. */
export const ALL_MARKS = [
  MATH_MARKS[0],
  { id_student: '1', SubjectID: 'lit', SubjectName: 'Literature', Mark: 'B+', Term: 'T1', MarkDate: '2024-03-20' },
  MATH_MARKS[1],
];
export const PUSH = { ServerKey: 'AAAA:key&<"é">', SenderId: '123456789012' };

/** What one port of one client reports: the values of its calls, under the keys the scenarios name. */
export type PortReport = Readonly<Record<string, unknown>>;

export interface OperationScenario {
  /**
   * The values a port reports for the operation's calls, by report key. A void operation reports
   * what the client returned for it (None/null); it runs over the SOAP ports only, since zeep cannot
   * call an HTTP operation whose output has no mime part.
   */
  readonly report: PortReport;
  /** For an operation whose result SIS_RESULTS=extended changes: what the SOAP ports report then. */
  readonly extended?: PortReport;
}

/** Every operation of the contract, by name (AuthCode's calls are also checked in the store: assertAuthCodes). */
export const SCENARIOS: Readonly<Record<string, OperationScenario>> = {
  AuthCode: { report: { authCode: null } },
  GetStudentsMarks: { report: { marks: null }, extended: { math: MATH_MARKS, all: ALL_MARKS } },
  GetStudentSchool: { report: { active: ACTIVE, inactive: INACTIVE } },
  GetTokenDevice: {
    report: { known: KNOWN_TOKEN, unknown: null, special: SPECIAL_TOKEN, specialId: SPECIAL_ID_TOKEN },
  },
  GetServerKeyAndSender: { report: { serverKey: null }, extended: { serverKey: PUSH } },
};

/** Operations whose result SIS_RESULTS=extended changes (another description of the same name). */
function changedWhenExtended(documented: readonly Operation[], extended: readonly Operation[]): Operation[] {
  return extended.filter((op) => documented.find((d) => d.name === op.name) !== op);
}

/**
 * What the scenario table misses or has too many, compared with a contract (both modes):
 * an empty list when every operation has its scenario and every scenario its operation.
 */
export function scenarioProblems(
  documented: readonly Operation[],
  extended: readonly Operation[],
  scenarios: Readonly<Record<string, OperationScenario>> = SCENARIOS,
): string[] {
  const problems: string[] = [];
  const has = (name: string): boolean => Object.hasOwn(scenarios, name);
  for (const op of documented) {
    if (!has(op.name))
      problems.push(
        `${op.service}.${op.name} has no client scenario: add it to SCENARIOS (test/clients/scenarios.ts) and call it from every client`,
      );
  }
  for (const name of Object.keys(scenarios)) {
    if (!documented.some((op) => op.name === name))
      problems.push(`the client scenario ${name} names no operation of the contract`);
  }
  const changed = changedWhenExtended(documented, extended);
  for (const op of changed) {
    if (has(op.name) && scenarios[op.name]!.extended === undefined)
      problems.push(
        `${op.service}.${op.name} answers otherwise under SIS_RESULTS=extended: its scenario needs an extended report`,
      );
  }
  for (const [name, scenario] of Object.entries(scenarios)) {
    if (scenario.extended !== undefined && !changed.some((op) => op.name === name))
      problems.push(`the client scenario ${name} has an extended report, but extended mode does not change it`);
  }
  return problems;
}

const names = (ops: readonly Operation[]): readonly string[] => ops.map((o) => o.name).sort();

/** Every operation of the contract: what a client calls over its SOAP ports. */
export const ALL_OPERATIONS = names(operations);
/** The contract's operations that answer a value: what zeep calls over its HTTP ports too. */
export const VALUE_OPERATIONS = names(operations.filter((op) => op.result.kind !== 'void'));
/** The operations SIS_RESULTS=extended changes: what the extended runs call. */
export const EXTENDED_OPERATIONS = names(changedWhenExtended(operations, operationsFor('extended')));

/** The values every port must report; HTTP ports (`withVoids` false) only run the operations that return values. */
export function expectedPort(withVoids: boolean): PortReport {
  const shown = operations.filter((op) => withVoids || op.result.kind !== 'void');
  return Object.assign({}, ...shown.map((op) => SCENARIOS[op.name]?.report ?? {})) as PortReport;
}

/** The values every SOAP port must report in extended mode. */
export function expectedExtendedPort(): PortReport {
  return Object.assign({}, ...EXTENDED_OPERATIONS.map((name) => SCENARIOS[name]?.extended ?? {})) as PortReport;
}
