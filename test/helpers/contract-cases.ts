/**
 * What every binding must read back from the contract's operations: the binding loop's cases
 * (test/helpers/binding-loop.ts) and the data they read.
 */
import assert from 'node:assert/strict';
import type { Dataset } from '../../src/store/store.js';
import type { BindingCases } from './binding-loop.js';
import { sqliteRows } from './sqlite-file.js';
import type { TestServer } from './test-server.js';

export const CONTRACT_DATASET: Dataset = {
  students: [
    {
      id_student: '1',
      fullName: "O'Brien & <Sons>",
      id_device: 'dev-001',
      ShowActive: '1',
      school_base_url: 'http://a.example',
    },
    { id_student: '3', fullName: 'علي', id_device: 'dev-003', ShowActive: '0', school_base_url: 'http://a.example' },
    { id_student: '2', fullName: 'Zoë 😀', id_device: 'dev-002', ShowActive: '1', school_base_url: 'http://a.example' },
    { id_student: '10', fullName: 'Plain', id_device: null, ShowActive: 'Y', school_base_url: 'http://b.example' },
    { id_student: '11', fullName: '', id_device: '', ShowActive: 'Y', school_base_url: 'http://b.example' },
  ],
  devices: [
    { id: '1', token: 'tok-AAA-111' },
    { id: 'esc', token: 'a<b & c>"d" \'e\' éè علي 😀' },
    { id: 'empty', token: '' },
    { id: 'nulltok', token: null },
  ],
};

export const CONTRACT_CASES: BindingCases = {
  AuthCode: [
    {
      title: 'records the pair with its time and answers void',
      args: (binding) => ({ code: `c-${binding}`, phone: '+15551234567' }),
      expected: undefined,
      check: ({ server, binding, calledAt }) => {
        const row = readAuthCodes(server).find((r) => r.code === `c-${binding}`);
        assert.ok(row, 'the code was recorded');
        assert.equal(row.phone, '+15551234567');
        // The time of the call (a second's leeway for the clocks' resolution).
        const at = new Date(row.created_at).getTime();
        assert.ok(at >= calledAt - 1000 && at <= Date.now() + 1000, `recorded at ${row.created_at}`);
      },
    },
  ],
  GetStudentsMarks: [
    { title: 'answers the documented void result', args: { StudnetID: '1', SubjectID: 'math' }, expected: undefined },
  ],
  GetStudentSchool: [
    {
      title: 'lists the matching students in import order, fields as stored',
      args: { school_base_url: 'http://a.example', show_active: '1' },
      expected: [
        { id_student: '1', fullName: "O'Brien & <Sons>", id_device: 'dev-001', ShowActive: '1' },
        { id_student: '2', fullName: 'Zoë 😀', id_device: 'dev-002', ShowActive: '1' },
      ],
    },
    {
      title: 'leaves null fields out and keeps empty ones',
      args: { school_base_url: 'http://b.example', show_active: 'Y' },
      expected: [
        { id_student: '10', fullName: 'Plain', ShowActive: 'Y' },
        { id_student: '11', fullName: '', id_device: '', ShowActive: 'Y' },
      ],
    },
    {
      title: 'answers an empty list for an unknown school',
      args: { school_base_url: 'http://nowhere.example', show_active: '1' },
      expected: [],
    },
    {
      title: 'answers an empty list for an unknown flag',
      args: { school_base_url: 'http://a.example', show_active: '9' },
      expected: [],
    },
  ],
  GetTokenDevice: [
    { title: 'answers the stored token', args: { id: '1' }, expected: 'tok-AAA-111' },
    {
      title: 'answers a token with special characters intact',
      args: { id: 'esc' },
      expected: 'a<b & c>"d" \'e\' éè علي 😀',
    },
    { title: 'answers an empty token', args: { id: 'empty' }, expected: '' },
    { title: 'answers null for an unknown id', args: { id: 'nope' }, expected: null },
    { title: 'answers null for a null token', args: { id: 'nulltok' }, expected: null },
  ],
  GetServerKeyAndSender: [{ title: 'answers the documented void result', args: {}, expected: undefined }],
};

function readAuthCodes(server: TestServer): { code: string; phone: string; created_at: string }[] {
  return sqliteRows(server.databaseFile, 'SELECT code, phone, created_at FROM auth_codes');
}
