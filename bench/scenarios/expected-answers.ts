/**
 * The answers ASMX writes, byte for byte, written here from the captured formats (test/golden)
 * independently of src/, so a fast wrong answer fails the check instead of winning the race.
 */
import { DECL, NS, XSD, XSI, xmlText } from './asmx-xml.js';
import { TOKEN } from './datasets.js';
import type { Student } from './datasets.js';

export const TEXT_XML = 'text/xml; charset=utf-8';
export const SOAP12_XML = 'application/soap+xml; charset=utf-8';
const FIELDS = ['id_student', 'fullName', 'id_device', 'ShowActive'] as const;

/** What a list answer writes of a student: the four fields, in this order. */
export type StudentFields = Pick<Student, (typeof FIELDS)[number]>;

export function soapEnvelope(ns: string, inner: string): string {
  return `${DECL}<soap:Envelope xmlns:soap="${ns}" xmlns:xsi="${XSI}" xmlns:xsd="${XSD}"><soap:Body>${inner}</soap:Body></soap:Envelope>`;
}

export function soapStudents(students: readonly StudentFields[]): string {
  if (students.length === 0)
    return `<GetStudentSchoolResponse xmlns="${NS}"><GetStudentSchoolResult /></GetStudentSchoolResponse>`;
  let out = `<GetStudentSchoolResponse xmlns="${NS}"><GetStudentSchoolResult>`;
  for (const s of students) {
    out += '<StudentInfo>';
    for (const f of FIELDS) {
      const v = s[f];
      if (v !== null) out += v === '' ? `<${f} />` : `<${f}>${xmlText(v)}</${f}>`;
    }
    out += '</StudentInfo>';
  }
  return `${out}</GetStudentSchoolResult></GetStudentSchoolResponse>`;
}

export function httpStudents(students: readonly StudentFields[]): string {
  const open = `<ArrayOfStudentInfo xmlns:xsd="${XSD}" xmlns:xsi="${XSI}" xmlns="${NS}"`;
  if (students.length === 0) return `${DECL}\n${open} />`;
  let out = `${DECL}\n${open}>`;
  for (const s of students) {
    out += '\n  <StudentInfo>';
    for (const f of FIELDS) {
      const v = s[f];
      if (v !== null) out += v === '' ? `\n    <${f} />` : `\n    <${f}>${xmlText(v)}</${f}>`;
    }
    out += '\n  </StudentInfo>';
  }
  return `${out}\n</ArrayOfStudentInfo>`;
}

/** GetTokenDevice over SOAP; `text` is the token as element text (escaped). */
export const soapTokenAnswer = (ns: string, text = xmlText(TOKEN)): string =>
  soapEnvelope(
    ns,
    `<GetTokenDeviceResponse xmlns="${NS}"><GetTokenDeviceResult>${text}</GetTokenDeviceResult></GetTokenDeviceResponse>`,
  );

/** AuthCode's answer: an empty response element. */
export const authCodeAnswer = (ns: string): string => soapEnvelope(ns, `<AuthCodeResponse xmlns="${NS}" />`);

/** GetTokenDevice over HTTP GET or POST. */
export const httpTokenAnswer = (text = xmlText(TOKEN)): string => `${DECL}\n<string xmlns="${NS}">${text}</string>`;

/** The values node-soap's list must hold, in order: every field ASMX writes with text. */
export function studentValues(students: readonly Student[]): string[] {
  return students.flatMap((s) => FIELDS.map((f) => s[f]).filter((v): v is string => v !== null && v !== ''));
}
