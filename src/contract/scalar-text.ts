/**
 * The text forms behind the scalar table (scalars.ts): how .NET's XmlConvert writes and reads a
 * number or a date, and how Convert.ChangeType(text, type, InvariantCulture) reads a form field.
 */
import { AsmxText } from '../errors/asmx-text.js';

/** A value that does not convert; `reason` is .NET's own message (the inner exception's). */
export class ScalarFormatError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'ScalarFormatError';
  }
}

/** XmlConvert trims XML white space only. */
export const trimXml = (s: string): string => s.replace(/^[ \t\r\n]+|[ \t\r\n]+$/g, '');
/** .NET's number parsing skips U+0020 and U+0009..U+000D around the number. */
const trimNumber = (s: string): string => s.replace(/^[ \t\n\v\f\r]+|[ \t\n\v\f\r]+$/g, '');

/**
 * Int32.Parse / Int64.Parse with NumberStyles.Integer (what XmlConvert and Convert.ChangeType
 * both use): white space around, one leading sign, decimal digits. `overflow` is the type's message.
 */
export function parseInteger(text: string, min: bigint, max: bigint, overflow: () => string): bigint {
  const s = trimNumber(text);
  if (!/^[+-]?[0-9]+$/.test(s)) throw new ScalarFormatError(AsmxText.Format_InvalidString());
  const n = BigInt(s);
  if (n < min || n > max) throw new ScalarFormatError(overflow());
  return n;
}

/**
 * Decimal.Parse: a decimal's text kept as its digits (a .NET decimal keeps its scale: `1.50`).
 * `form` adds what NumberStyles.Number allows over XmlConvert's styles: thousands separators and
 * a trailing sign.
 */
export function parseDecimal(text: string, form: boolean): string {
  const s = form ? trimNumber(text) : trimXml(text);
  const m = form
    ? /^([+-]?)([0-9][0-9,]*|)(?:\.([0-9]*))?([+-]?)$/.exec(s)
    : /^([+-]?)([0-9]*)(?:\.([0-9]*))?()$/.exec(s);
  if (m === null) throw new ScalarFormatError(AsmxText.Format_InvalidString());
  const [, lead = '', whole = '', frac = '', trail = ''] = m;
  if ((lead !== '' && trail !== '') || whole.replace(/,/g, '') + frac === '') {
    throw new ScalarFormatError(AsmxText.Format_InvalidString());
  }
  const digits = whole.replace(/,/g, '').replace(/^0+(?=[0-9])/, '') || '0';
  if (digits.length > 29 || (digits.length === 29 && digits > '79228162514264337593543950335')) {
    throw new ScalarFormatError(AsmxText.Overflow_Decimal());
  }
  const negative = (lead === '-' || trail === '-') && /[1-9]/.test(digits + frac);
  return `${negative ? '-' : ''}${digits}${frac === '' ? '' : `.${frac}`}`;
}

/** A decimal value as this service holds it: its invariant text, which XmlConvert writes as is. */
export function checkDecimal(value: string): string {
  if (!/^-?(0|[1-9][0-9]{0,28})(\.[0-9]{1,28})?$/.test(value)) {
    throw new TypeError(`A decimal is held as its invariant text (-12.50), not ${JSON.stringify(value)}.`);
  }
  return value;
}

/**
 * XmlConvert.ToString(double): .NET Framework's "R" format: 15 significant digits when they
 * read back the same value, else 17; exponent form (`1E+15`, `1E-05`) outside 1E-05..1E+15
 * (1E+17 at 17 digits); `INF`, `-INF`, `NaN`, `-0`.
 */
export function formatDouble(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return 'INF';
  if (v === -Infinity) return '-INF';
  if (Object.is(v, -0)) return '-0';
  let precision = 15;
  let exp = v.toExponential(precision - 1);
  if (Number(exp) !== v) {
    precision = 17;
    exp = v.toExponential(precision - 1);
  }
  const [mantissa = '', power = '0'] = exp.split('e');
  const negative = mantissa.startsWith('-');
  const digits = mantissa.replace(/[-.]/g, '').replace(/0+$/, '') || '0';
  const e = Number(power);
  const sign = negative ? '-' : '';
  if (e + 1 > precision || e < -4) {
    const rest = digits.length > 1 ? `.${digits.slice(1)}` : '';
    return `${sign}${digits[0]}${rest}E${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
  }
  if (e < 0) return `${sign}0.${'0'.repeat(-e - 1)}${digits}`;
  const whole = digits.slice(0, e + 1).padEnd(e + 1, '0');
  const frac = digits.slice(e + 1);
  return `${sign}${whole}${frac === '' ? '' : `.${frac}`}`;
}

/**
 * Double.Parse: XmlConvert's form also reads `INF` and `-INF`; a form field (NumberStyles.Float
 * with AllowThousands) also takes thousands separators. Both read `NaN`, `Infinity` and
 * `-Infinity`, the invariant culture's symbols.
 */
export function parseDouble(text: string, form: boolean): number {
  const s = form ? trimNumber(text) : trimXml(text);
  if (!form && s === 'INF') return Infinity;
  if (!form && s === '-INF') return -Infinity;
  const symbols = new Map([
    ['NaN', NaN],
    ['Infinity', Infinity],
    ['-Infinity', -Infinity],
    ['+Infinity', Infinity],
  ]);
  const symbol = symbols.get(trimNumber(s));
  if (symbol !== undefined) return symbol;
  const number = form
    ? /^[+-]?([0-9][0-9,]*\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$/
    : /^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$/;
  if (!number.test(s)) throw new ScalarFormatError(AsmxText.Format_InvalidString());
  const v = Number(s.replace(/,/g, ''));
  if (!Number.isFinite(v)) throw new ScalarFormatError(AsmxText.Overflow_Double());
  return v;
}

const XSD_DATE_TIME =
  /^(-?[0-9]{4})-([0-9]{2})-([0-9]{2})(?:[T ]([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?)?(Z|[+-][0-9]{2}:[0-9]{2})?$/;

/**
 * A dateTime or date in the XSD form (`2024-05-01T10:20:30.5Z`, `2024-05-01`, an offset or none).
 * A time without zone is read as UTC: this service holds every dateTime as a UTC instant.
 * Returns null when the text is not such a date; `form` also allows a space for the `T`.
 */
export function parseXsdDateTime(text: string, form: boolean): Date | null {
  const s = trimXml(text);
  const m = XSD_DATE_TIME.exec(s);
  if (m === null || (!form && s.includes(' '))) return null;
  const [, y = '', mo = '', d = '', h = '0', mi = '0', sec = '0', frac = '', zone = 'Z'] = m;
  const [year, month, day, hour, minute, second] = [y, mo, d, h, mi, sec].map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (year < 1 || year > 9999 || month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) return null;
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  if (date.getUTCMonth() !== month - 1) return null;
  date.setUTCHours(hour, minute, second, Math.floor(Number(`0${frac || '.0'}`) * 1000));
  if (zone !== 'Z') {
    const offset = (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6))) * (zone.startsWith('-') ? -1 : 1);
    date.setTime(date.getTime() - offset * 60_000);
  }
  return date;
}

/**
 * XmlConvert.ToString(DateTime, RoundtripKind) of a UTC DateTime: `yyyy-MM-ddTHH:mm:ss.FFFFFFFZ`,
 * the fraction without its trailing zeros (and without its point when zero).
 */
export function formatDateTime(value: Date): string {
  const year = value.getUTCFullYear();
  if (Number.isNaN(year) || year < 1 || year > 9999) {
    throw new TypeError(`A dateTime lies between the years 1 and 9999, not ${String(value)}.`);
  }
  const iso = `${String(year).padStart(4, '0')}${value.toISOString().slice(-20, -5)}`;
  const ms = value.getUTCMilliseconds();
  return `${iso}${ms === 0 ? '' : `.${String(ms).padStart(3, '0').replace(/0+$/, '')}`}Z`;
}
