/**
 * The real clients' scenario table against the contract: every operation has its scenario, every
 * scenario its operation, and an operation added without one is named (every client test checks
 * the same when it starts, and expects the contract's operations among the calls it sees).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { operations, operationsFor } from '../../src/operations/index.js';
import { ListClasses } from '../helpers/class-registry.js';
import {
  ALL_OPERATIONS,
  EXTENDED_OPERATIONS,
  expectedPort,
  SCENARIOS,
  scenarioProblems,
  VALUE_OPERATIONS,
} from './scenarios.js';

const extended = operationsFor('extended');

describe('the client scenario table', () => {
  it('has a scenario for every operation of the contract, and for nothing else', () => {
    assert.deepEqual(scenarioProblems(operations, extended), []);
    assert.deepEqual(Object.keys(SCENARIOS).sort(), ALL_OPERATIONS);
  });

  it('names a sixth operation that has no scenario', () => {
    assert.deepEqual(scenarioProblems([...operations, ListClasses], [...extended, ListClasses]), [
      'ClassRegistry.ListClasses has no client scenario: add it to SCENARIOS (test/clients/scenarios.ts) and call it from every client',
    ]);
  });

  it('names a scenario whose operation the contract no longer has', () => {
    const without = (ops: typeof operations): typeof operations => ops.filter((op) => op.name !== 'GetTokenDevice');
    assert.deepEqual(scenarioProblems(without(operations), without(extended)), [
      'the client scenario GetTokenDevice names no operation of the contract',
    ]);
  });

  it('asks for an extended report where SIS_RESULTS=extended changes an answer, and only there', () => {
    const { GetStudentsMarks, ...rest } = SCENARIOS;
    assert.ok(GetStudentsMarks);
    assert.deepEqual(
      scenarioProblems(operations, extended, { ...rest, GetStudentsMarks: { report: GetStudentsMarks.report } }),
      [
        'GetStudnetsMarks.GetStudentsMarks answers otherwise under SIS_RESULTS=extended: its scenario needs an extended report',
      ],
    );
    assert.deepEqual(scenarioProblems(operations, operations), [
      'the client scenario GetStudentsMarks has an extended report, but extended mode does not change it',
      'the client scenario GetServerKeyAndSender has an extended report, but extended mode does not change it',
    ]);
  });

  it('the operation lists the clients are held to come from the contract', () => {
    assert.deepEqual(ALL_OPERATIONS, [
      'AuthCode',
      'GetServerKeyAndSender',
      'GetStudentSchool',
      'GetStudentsMarks',
      'GetTokenDevice',
    ]);
    assert.deepEqual(VALUE_OPERATIONS, ['GetStudentSchool', 'GetTokenDevice']);
    assert.deepEqual(EXTENDED_OPERATIONS, ['GetServerKeyAndSender', 'GetStudentsMarks']);
    // The report keys the clients print (test/clients/*/client.*), from the scenarios of those operations.
    assert.deepEqual(Object.keys(expectedPort(true)).sort(), [
      'active',
      'authCode',
      'inactive',
      'known',
      'marks',
      'serverKey',
      'special',
      'specialId',
      'unknown',
    ]);
    assert.deepEqual(Object.keys(expectedPort(false)).sort(), [
      'active',
      'inactive',
      'known',
      'special',
      'specialId',
      'unknown',
    ]);
  });
});
