import { groupServices } from '../contract/define.js';
import type { OperationSpec, ParamSpec, ResultSpec, ServiceSpec } from '../contract/types.js';
import { AuthCode } from './auth-code.js';
import type { OperationContext } from './context.js';
import { GetServerKeyAndSender } from './get-server-key-and-sender.js';
import { GetStudentSchool } from './get-student-school.js';
import { GetStudentsMarks } from './get-students-marks.js';
import { GetTokenDevice } from './get-token-device.js';

export type Operation = OperationSpec<readonly ParamSpec[], ResultSpec, OperationContext>;
export type Service = ServiceSpec<OperationContext>;

/** Every operation, in the order the services declare them (WSDL and help pages keep this order). */
export const operations: readonly Operation[] = [
  AuthCode,
  GetStudentsMarks,
  GetStudentSchool,
  GetTokenDevice,
  GetServerKeyAndSender,
];

export const services: readonly Service[] = groupServices(operations);
