/**
 * What the answer cache tests (test/cache/answer-cache*.test.ts) ask and count: the students of
 * one school, the GetStudentSchool list they make over a binding, and the cache counters a
 * service's /metrics reports.
 */
import assert from 'node:assert/strict';
import { GetStudentSchool } from '../../src/operations/get-student-school.js';
import type { Operation } from '../../src/operations/index.js';
import type { Dataset, StudentRecord } from '../../src/store/store.js';
import type { BindingClient, PlainArgs } from './binding-clients.js';
import { rawRequest } from './raw-http.js';
import type { TestServer } from './test-server.js';

export const SCHOOL = 'http://cached.example';
export const student = (n: number): StudentRecord => ({
  id_student: `c${n}`,
  fullName: `Student ${n}`,
  id_device: `d${n}`,
  ShowActive: '1',
  school_base_url: SCHOOL,
});
export const dataset = (n: number): Dataset => ({
  students: Array.from({ length: n }, (_, i) => student(i + 1)),
  devices: [{ id: 'dev-1', token: 'tok-1' }],
});
export const ARGS: PlainArgs = { school_base_url: SCHOOL, show_active: '1' };

/** The value of the counter `name` on the server's /metrics (NaN when it has none). */
export async function counter(server: TestServer, name: string): Promise<number> {
  const res = await rawRequest(server.url, { method: 'GET', path: '/metrics', headers: [] });
  const line = res.body
    .toString('utf8')
    .split('\n')
    .find((l) => l.startsWith(`${name} `));
  return line === undefined ? Number.NaN : Number(line.split(' ')[1]);
}

/** The names of the school's active students, as GetStudentSchool answers them over `binding`. */
export async function names(server: TestServer, binding: BindingClient): Promise<string[]> {
  const { res, value } = await binding.call(server.url, GetStudentSchool as Operation, ARGS);
  assert.equal(res.status, 200);
  return (value as { fullName: string }[]).map((s) => s.fullName);
}
