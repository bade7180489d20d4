/**
 * What the benchmark sends and what it must get back, scenario by scenario. The expected answers
 * (expected-answers.ts) are written from the captured ASMX formats (test/golden), independently
 * of src/, so a fast wrong answer fails the check instead of winning the race.
 */
import { SOAP11_NS, SOAP12_NS } from './asmx-xml.js';
import { BIG_SCHOOL, SMALL_SCHOOL, TOKEN, TOKEN_ID, activeStudents, growthSchool } from './datasets.js';
import type { Dataset, Student } from './datasets.js';
import {
  authCodeAnswer,
  SOAP12_XML,
  TEXT_XML,
  httpStudents,
  httpTokenAnswer,
  soapEnvelope,
  soapStudents,
  soapTokenAnswer,
  studentValues,
} from './expected-answers.js';
import type { PeerExpectation, Scenario } from './scenario.js';
import { SOAP12_HEADERS, soap11Headers, soapRequest } from './soap-requests.js';

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
    necessary: { op: 'school', from: 'soap', soapNs: SOAP11_NS },
  };
}

/** GetTokenDevice over each of the four bindings. */
function tokenScenarios(): Scenario[] {
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
      necessary: { op: 'token', from: 'soap', soapNs: SOAP11_NS },
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
      expected: { status: 200, contentType: SOAP12_XML, body: soapTokenAnswer(SOAP12_NS) },
      // node-soap answers one envelope version per listener: its 1.2 listener has its own path.
      peerPath: '/soap12/PushNotificationMobile.asmx',
      peer: tokenPeer,
      necessary: { op: 'token', from: 'soap', soapNs: SOAP12_NS },
    },
    {
      id: 'token-get',
      title: 'GetTokenDevice',
      binding: 'HTTP GET',
      request: { method: 'GET', path: `/PushNotificationMobile.asmx/GetTokenDevice?id=${TOKEN_ID}`, headers: {} },
      expected: { status: 200, contentType: TEXT_XML, body: httpTokenAnswer() },
      necessary: { op: 'token', from: 'query' },
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
      expected: { status: 200, contentType: TEXT_XML, body: httpTokenAnswer() },
      necessary: { op: 'token', from: 'form' },
    },
  ];
}

/** GetStudentSchool of the small school (SOAP 1.1 and HTTP GET) and of the 1,000-student one. */
function schoolScenarios(dataset: Dataset): Scenario[] {
  const small = activeStudents(dataset, SMALL_SCHOOL);
  const big = activeStudents(dataset, BIG_SCHOOL);
  return [
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
      necessary: { op: 'school', from: 'query' },
    },
    gssSoap11('school1000-soap11', `GetStudentSchool (${big.length} students)`, BIG_SCHOOL, big),
  ];
}

/** AuthCode, the operation that writes. */
function authCodeScenario(): Scenario {
  return {
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
    expected: {
      status: 200,
      contentType: TEXT_XML,
      body: authCodeAnswer(SOAP11_NS),
    },
    peerPath: '/AuthCodeSending.asmx',
    peer: { values: [] },
    writes: true,
    necessary: { op: 'authcode', from: 'soap', soapNs: SOAP11_NS },
  };
}

/** The load scenarios, in the order they run and are reported. */
export function scenarios(dataset: Dataset): Scenario[] {
  return [...tokenScenarios(), ...schoolScenarios(dataset), authCodeScenario()];
}

/** The expected answer of a growth request (GetStudentSchool over SOAP 1.1 of n students). */
export function growthScenario(dataset: Dataset, n: number): Scenario {
  const school = growthSchool(n);
  return gssSoap11(`growth-${n}`, `GetStudentSchool (${n} students)`, school, activeStudents(dataset, school));
}
