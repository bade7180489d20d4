/**
 * What the benchmark sends and what it must get back. The expected answers are written here from
 * the captured ASMX formats (test/golden), independently of src/, so a fast wrong answer fails the
 * check instead of winning the race.
 */

export const NS = 'http://tempuri.org/';
const DECL = '<?xml version="1.0" encoding="utf-8"?>';
const SOAP11_NS = 'http://schemas.xmlsoap.org/soap/envelope/';
const SOAP12_NS = 'http://www.w3.org/2003/05/soap-envelope';
const XSI = 'http://www.w3.org/2001/XMLSchema-instance';
const XSD = 'http://www.w3.org/2001/XMLSchema';

export interface Student {
  readonly id_student: string;
  readonly fullName: string | null;
  readonly id_device: string | null;
  readonly ShowActive: string | null;
  readonly school_base_url: string;
}

export interface Device {
  readonly id: string;
  readonly token: string | null;
}

export interface Dataset {
  readonly students: readonly Student[];
  readonly devices: readonly Device[];
}

export const TOKEN_ID = '1';
export const TOKEN = 'tok-AAA-111';
export const SMALL_SCHOOL = 'http://school-a.example';
export const BIG_SCHOOL = 'http://big.example';
export const growthSchool = (n: number): string => `http://growth-${n}.example`;

/** Students with the text an ASMX answer must escape, non-ASCII, and a field left out (null). */
export function makeStudents(tag: string, school: string, active: number, inactive: number): Student[] {
  const out: Student[] = [];
  for (let i = 1; i <= active + inactive; i++) {
    const n = String(i).padStart(6, '0');
    const fullName =
      i % 7 === 0 ? `O'Brien & <Sons> ${n}` : i % 5 === 0 ? `Zoë Ångström ${n}` : i % 11 === 0 ? `علي ${n}` : `Student ${n}`;
    out.push({
      id_student: `${tag}-${n}`,
      fullName,
      id_device: i % 13 === 0 ? null : `dev-${tag}-${n}`,
      ShowActive: i <= active ? '1' : '0',
      school_base_url: school,
    });
  }
  return out;
}

const SMALL: readonly Student[] = [
  { id_student: '1', fullName: "O'Brien & <Sons>", id_device: 'dev-001', ShowActive: '1', school_base_url: SMALL_SCHOOL },
  { id_student: '2', fullName: 'Zoë Ångström', id_device: 'dev-002', ShowActive: '1', school_base_url: SMALL_SCHOOL },
  { id_student: '3', fullName: 'علي', id_device: 'dev-003', ShowActive: '0', school_base_url: SMALL_SCHOOL },
];

/** The dataset of the load scenarios: one token, a small school, a school of 1,000 active students. */
export function mainDataset(): Dataset {
  const devices: Device[] = [{ id: TOKEN_ID, token: TOKEN }];
  for (let i = 2; i <= 1000; i++) devices.push({ id: String(i), token: `tok-${i.toString(36).padStart(4, '0')}` });
  return { students: [...SMALL, ...makeStudents('big', BIG_SCHOOL, 1000, 100)], devices };
}

export const GROWTH_SIZES = [10_000, 100_000] as const;

export function growthDataset(sizes: readonly number[]): Dataset {
  return { students: sizes.flatMap((n) => makeStudents(`g${n}`, growthSchool(n), n, 0)), devices: [] };
}

export function activeStudents(dataset: Dataset, school: string): Student[] {
  return dataset.students.filter((s) => s.school_base_url === school && s.ShowActive === '1');
}

// --- Expected answers, as ASMX writes them -------------------------------------------------------

const text = (v: string): string => v.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const FIELDS = ['id_student', 'fullName', 'id_device', 'ShowActive'] as const;

function soapEnvelope(ns: string, inner: string): string {
  return `${DECL}<soap:Envelope xmlns:soap="${ns}" xmlns:xsi="${XSI}" xmlns:xsd="${XSD}"><soap:Body>${inner}</soap:Body></soap:Envelope>`;
}

function soapStudents(students: readonly Student[]): string {
  if (students.length === 0) return `<GetStudentSchoolResponse xmlns="${NS}"><GetStudentSchoolResult /></GetStudentSchoolResponse>`;
  let out = `<GetStudentSchoolResponse xmlns="${NS}"><GetStudentSchoolResult>`;
  for (const s of students) {
    out += '<StudentInfo>';
    for (const f of FIELDS) {
      const v = s[f];
      if (v !== null) out += v === '' ? `<${f} />` : `<${f}>${text(v)}</${f}>`;
    }
    out += '</StudentInfo>';
  }
  return `${out}</GetStudentSchoolResult></GetStudentSchoolResponse>`;
}

function httpStudents(students: readonly Student[]): string {
  const open = `<ArrayOfStudentInfo xmlns:xsd="${XSD}" xmlns:xsi="${XSI}" xmlns="${NS}"`;
  if (students.length === 0) return `${DECL}\n${open} />`;
  let out = `${DECL}\n${open}>`;
  for (const s of students) {
    out += '\n  <StudentInfo>';
    for (const f of FIELDS) {
      const v = s[f];
      if (v !== null) out += v === '' ? `\n    <${f} />` : `\n    <${f}>${text(v)}</${f}>`;
    }
    out += '\n  </StudentInfo>';
  }
  return `${out}\n</ArrayOfStudentInfo>`;
}

const soapTokenAnswer = (ns: string): string =>
  soapEnvelope(ns, `<GetTokenDeviceResponse xmlns="${NS}"><GetTokenDeviceResult>${TOKEN}</GetTokenDeviceResult></GetTokenDeviceResponse>`);

// --- Requests ----------------------------------------------------------------------------------

/** A SOAP request as .NET clients format it (indented, as in the captures). */
function soapRequest(ns: string, prefix: string, op: string, params: ReadonlyArray<readonly [string, string]>): string {
  const inner = params.map(([k, v]) => `\n      <${k}>${text(v)}</${k}>`).join('');
  return `${DECL}
<${prefix}:Envelope xmlns:xsi="${XSI}" xmlns:xsd="${XSD}" xmlns:${prefix}="${ns}">
  <${prefix}:Body>
    <${op} xmlns="${NS}">${inner}
    </${op}>
  </${prefix}:Body>
</${prefix}:Envelope>`;
}

const soap11Headers = (op: string): Record<string, string> => ({
  'Content-Type': 'text/xml; charset=utf-8',
  SOAPAction: `"${NS}${op}"`,
});
const SOAP12_HEADERS = { 'Content-Type': 'application/soap+xml; charset=utf-8' };
const TEXT_XML = 'text/xml; charset=utf-8';

/**
 * `ours` runs as `npm start` does (logging at info, JSON lines to stdout, here a file);
 * `ours-silent` is the same with LOG_LEVEL=silent, for what the access log costs.
 */
export type TargetName = 'ceiling' | 'node-soap' | 'ours' | 'ours-silent';
export const TARGETS: readonly TargetName[] = ['ceiling', 'node-soap', 'ours', 'ours-silent'];

/** Ours in either configuration: the same answers, the same paths. */
export const isOurs = (t: TargetName): boolean => t === 'ours' || t === 'ours-silent';

export interface BenchRequest {
  readonly method: 'GET' | 'POST';
  /** The path at our service (ASMX's); node-soap and the ceiling get their own, see pathFor. */
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
}

export interface Expected {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
}

/** What node-soap's answer must hold: its bytes differ (prefixes, escaping), its values may not. */
export interface PeerExpectation {
  /** Values, in order, after entity decoding. */
  readonly values: readonly string[];
  /** How many `<StudentInfo>` elements, when a list is answered. */
  readonly items?: number;
}

export interface Scenario {
  readonly id: string;
  readonly title: string;
  readonly binding: 'SOAP 1.1' | 'SOAP 1.2' | 'HTTP GET' | 'HTTP POST';
  readonly request: BenchRequest;
  readonly expected: Expected;
  /** Path at node-soap; absent when node-soap cannot serve the binding. */
  readonly peerPath?: string;
  readonly peer?: PeerExpectation;
  /** The operation writes (AuthCode): the ceiling answers without writing anything. */
  readonly writes?: boolean;
}

function studentValues(students: readonly Student[]): string[] {
  return students.flatMap((s) => FIELDS.map((f) => s[f]).filter((v): v is string => v !== null && v !== ''));
}

export function gssSoap11(id: string, title: string, school: string, students: readonly Student[]): Scenario {
  return {
    id,
    title,
    binding: 'SOAP 1.1',
    request: {
      method: 'POST',
      path: '/NotificationNotes.asmx',
      headers: soap11Headers('GetStudentSchool'),
      body: soapRequest(SOAP11_NS, 'soap', 'GetStudentSchool', [
        ['school_base_url', school],
        ['show_active', '49'],
      ]),
    },
    expected: { status: 200, contentType: TEXT_XML, body: soapEnvelope(SOAP11_NS, soapStudents(students)) },
    peerPath: '/NotificationNotes.asmx',
    peer: { values: studentValues(students), items: students.length },
  };
}

export function scenarios(dataset: Dataset): Scenario[] {
  const small = activeStudents(dataset, SMALL_SCHOOL);
  const big = activeStudents(dataset, BIG_SCHOOL);
  const tokenPeer: PeerExpectation = { values: [TOKEN] };
  return [
    {
      id: 'token-soap11',
      title: 'GetTokenDevice',
      binding: 'SOAP 1.1',
      request: {
        method: 'POST',
        path: '/PushNotificationMobile.asmx',
        headers: soap11Headers('GetTokenDevice'),
        body: soapRequest(SOAP11_NS, 'soap', 'GetTokenDevice', [['id', TOKEN_ID]]),
      },
      expected: { status: 200, contentType: TEXT_XML, body: soapTokenAnswer(SOAP11_NS) },
      peerPath: '/PushNotificationMobile.asmx',
      peer: tokenPeer,
    },
    {
      id: 'token-soap12',
      title: 'GetTokenDevice',
      binding: 'SOAP 1.2',
      request: {
        method: 'POST',
        path: '/PushNotificationMobile.asmx',
        headers: SOAP12_HEADERS,
        body: soapRequest(SOAP12_NS, 'soap12', 'GetTokenDevice', [['id', TOKEN_ID]]),
      },
      expected: { status: 200, contentType: 'application/soap+xml; charset=utf-8', body: soapTokenAnswer(SOAP12_NS) },
      // node-soap answers one envelope version per listener: its 1.2 listener has its own path.
      peerPath: '/soap12/PushNotificationMobile.asmx',
      peer: tokenPeer,
    },
    {
      id: 'token-get',
      title: 'GetTokenDevice',
      binding: 'HTTP GET',
      request: { method: 'GET', path: `/PushNotificationMobile.asmx/GetTokenDevice?id=${TOKEN_ID}`, headers: {} },
      expected: { status: 200, contentType: TEXT_XML, body: `${DECL}\n<string xmlns="${NS}">${TOKEN}</string>` },
    },
    {
      id: 'token-post',
      title: 'GetTokenDevice',
      binding: 'HTTP POST',
      request: {
        method: 'POST',
        path: '/PushNotificationMobile.asmx/GetTokenDevice',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: `id=${TOKEN_ID}`,
      },
      expected: { status: 200, contentType: TEXT_XML, body: `${DECL}\n<string xmlns="${NS}">${TOKEN}</string>` },
    },
    gssSoap11('school-soap11', `GetStudentSchool (${small.length} students)`, SMALL_SCHOOL, small),
    {
      id: 'school-get',
      title: `GetStudentSchool (${small.length} students)`,
      binding: 'HTTP GET',
      request: {
        method: 'GET',
        path: `/NotificationNotes.asmx/GetStudentSchool?school_base_url=${encodeURIComponent(SMALL_SCHOOL)}&show_active=1`,
        headers: {},
      },
      expected: { status: 200, contentType: TEXT_XML, body: httpStudents(small) },
    },
    gssSoap11('school1000-soap11', `GetStudentSchool (${big.length} students)`, BIG_SCHOOL, big),
    {
      id: 'authcode-soap11',
      title: 'AuthCode (write)',
      binding: 'SOAP 1.1',
      request: {
        method: 'POST',
        path: '/AuthCodeSending.asmx',
        headers: soap11Headers('AuthCode'),
        body: soapRequest(SOAP11_NS, 'soap', 'AuthCode', [
          ['code', '123456'],
          ['phone', '+15551234567'],
        ]),
      },
      expected: { status: 200, contentType: TEXT_XML, body: soapEnvelope(SOAP11_NS, `<AuthCodeResponse xmlns="${NS}" />`) },
      peerPath: '/AuthCodeSending.asmx',
      peer: { values: [] },
      writes: true,
    },
  ];
}

/** The targets a scenario runs against: node-soap only where it serves the binding. */
export function targetsOf(s: Scenario, withSilent = true): TargetName[] {
  return TARGETS.filter((t) => (t !== 'node-soap' || s.peerPath !== undefined) && (t !== 'ours-silent' || withSilent));
}

/** Each target's path: ours is ASMX's; the ceiling keys its fixed answers by scenario. */
export function pathFor(s: Scenario, target: TargetName): string {
  if (target === 'ceiling') return `/ceiling/${s.id}`;
  if (target === 'node-soap') return s.peerPath ?? s.request.path;
  return s.request.path;
}

/** Decodes the five XML entities and character references, to compare values, not bytes. */
export function decodeEntities(xml: string): string {
  return xml.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|amp|lt|gt|quot|apos);/g, (_m, e: string) => {
    if (e.startsWith('#x')) return String.fromCodePoint(parseInt(e.slice(2), 16));
    if (e.startsWith('#')) return String.fromCodePoint(parseInt(e.slice(1), 10));
    return { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }[e] ?? '';
  });
}

/** Null when node-soap's answer holds what it must; otherwise what is wrong. */
export function checkPeerBody(body: string, expect: PeerExpectation): string | null {
  if (expect.items !== undefined) {
    const items = body.match(/<(?:[\w.-]+:)?StudentInfo>/g)?.length ?? 0;
    if (items !== expect.items) return `${items} StudentInfo elements, expected ${expect.items}`;
  }
  const decoded = decodeEntities(body);
  let at = 0;
  for (const v of expect.values) {
    const found = decoded.indexOf(v, at);
    if (found < 0) return `value ${JSON.stringify(v)} missing (or out of order)`;
    at = found + v.length;
  }
  return null;
}

/** The expected answer of a growth request (GetStudentSchool over SOAP 1.1 of n students). */
export function growthScenario(dataset: Dataset, n: number): Scenario {
  const school = growthSchool(n);
  return gssSoap11(`growth-${n}`, `GetStudentSchool (${n} students)`, school, activeStudents(dataset, school));
}
