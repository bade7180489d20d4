import { InvalidArgumentError } from '../errors/errors.js';

/**
 * AuthCode's input rules. A phone is an optional `+` and 7 to 15 digits once spaces and dashes
 * are removed (E.164 allows 15); it is stored in that normal form so limits count one phone once.
 * A code is 1 to 32 printable characters.
 */
export function normalizePhone(phone: string | null): string {
  if (phone === null) throw new InvalidArgumentError('Missing phone: send the phone number the code is for.');
  const compact = phone.replace(/[\s-]/g, '');
  if (!/^\+?[0-9]{7,15}$/.test(compact)) {
    throw new InvalidArgumentError(
      'Invalid phone: expected an optional + followed by 7 to 15 digits (spaces and dashes are ignored).',
    );
  }
  return compact;
}

export function checkCode(code: string | null): string {
  if (code === null) throw new InvalidArgumentError('Missing code: send the code to deliver.');
  const chars = [...code];
  if (chars.length < 1 || chars.length > 32 || code.trim() === '' || /[\p{C}]/u.test(code)) {
    throw new InvalidArgumentError('Invalid code: expected 1 to 32 printable characters.');
  }
  return code;
}
