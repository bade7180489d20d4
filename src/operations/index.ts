import { groupServices } from '../contract/define.js';
import type { OperationSpec, ParamSpec, ResultSpec, ServiceSpec } from '../contract/types.js';
import { AuthCode } from './auth-code.js';
import type { OperationContext } from './context.js';
import { GetServerKeyAndSender, GetServerKeyAndSenderExtended } from './get-server-key-and-sender.js';
import { GetStudentSchool } from './get-student-school.js';
import { GetStudentsMarks, GetStudentsMarksExtended } from './get-students-marks.js';
import { GetTokenDevice } from './get-token-device.js';

export type Operation = OperationSpec<readonly ParamSpec[], ResultSpec, OperationContext>;
export type Service = ServiceSpec<OperationContext>;

/**
 * `documented`: the answers exactly as the spec and ASMX show them (marks and push settings
 * empty). `extended`: those two carry their fields; WSDL, help pages and every binding follow.
 */
export type ResultsMode = 'documented' | 'extended';

/** Every operation, in the order the services declare them (WSDL and help pages keep this order). */
export function operationsFor(mode: ResultsMode): readonly Operation[] {
  const extended = mode === 'extended';
  return [
    AuthCode,
    extended ? GetStudentsMarksExtended : GetStudentsMarks,
    GetStudentSchool,
    GetTokenDevice,
    extended ? GetServerKeyAndSenderExtended : GetServerKeyAndSender,
  ];
}

export function servicesFor(mode: ResultsMode): readonly Service[] {
  return groupServices(operationsFor(mode));
}

/** The documented operations and services (the default mode). */
export const operations: readonly Operation[] = operationsFor('documented');
export const services: readonly Service[] = servicesFor('documented');
