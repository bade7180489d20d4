/**
 * Keeping phones and codes out of the logs: URLs lose their query values and long digit runs,
 * and errors lose the fields where drivers echo values (PostgreSQL's `detail`, `where`, …).
 */
import { stdSerializers } from 'pino';

const MAX_URL = 256;

/** `/X.asmx/AuthCode?phone=0501234567&code=1234` -> `/X.asmx/AuthCode?phone=***&code=***`. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  const path = (q < 0 ? url : url.slice(0, q)).replace(/(?:\d|%3\d)(?:[\d\s.()+-]|%3\d|%2[0B])*(?:\d|%3\d)/gi, (run) =>
    run.replace(/%3\d/gi, '0').replace(/\D/g, '').length >= 4 ? '***' : run,
  );
  const query =
    q < 0
      ? ''
      : `?${url
          .slice(q + 1)
          .split('&')
          .map((pair) => {
            const eq = pair.indexOf('=');
            return eq < 0 ? pair.replace(/(?:\d|%3\d){4,}/gi, '***') : `${pair.slice(0, eq)}=***`;
          })
          .join('&')}`;
  const out = path + query;
  return out.length > MAX_URL ? `${out.slice(0, MAX_URL)}…` : out;
}

/** Fields of driver errors that may carry row values or statement parameters. */
const VALUE_FIELDS = [
  'detail',
  'where',
  'hint',
  'parameters',
  'params',
  'values',
  'args',
  'body',
  'phone',
  'query',
  'sql',
];

type Serialized = ReturnType<typeof stdSerializers.err>;

/** pino's error serializer (type, message and stack with causes), less fields that may hold values. */
export function errSerializer(err: Error): Serialized {
  const out = stdSerializers.err(err);
  if (typeof out !== 'object' || out === null) return out;
  const record = out as unknown as Record<string, unknown>;
  for (const field of VALUE_FIELDS) if (field in record) Reflect.deleteProperty(record, field);
  return out;
}
