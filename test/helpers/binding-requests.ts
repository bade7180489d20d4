/**
 * The request each binding's client sends for one call, written from the spec, for the tests that
 * load a running service over the four bindings while a dependency is in trouble (a partition, a
 * switchover).
 */
import type { rawRequest } from './raw-http.js';

export type Binding = 'soap11' | 'soap12' | 'httpget' | 'httppost';
export const BINDINGS: readonly Binding[] = ['soap11', 'soap12', 'httpget', 'httppost'];

export interface Call {
  readonly service: string;
  readonly op: string;
  readonly args: Readonly<Record<string, string>>;
}

/** The request a client of `binding` sends for `call`. */
export function requestOf(binding: Binding, { service, op, args }: Call): Parameters<typeof rawRequest>[1] {
  const form = new URLSearchParams(args).toString();
  if (binding === 'httpget') return { method: 'GET', path: `/${service}.asmx/${op}?${form}` };
  if (binding === 'httppost')
    return {
      method: 'POST',
      path: `/${service}.asmx/${op}`,
      headers: [['Content-Type', 'application/x-www-form-urlencoded']],
      body: Buffer.from(form),
    };
  const params = Object.entries(args)
    .map(([k, v]) => `<${k}>${v.replace(/&/g, '&amp;').replace(/</g, '&lt;')}</${k}>`)
    .join('');
  const ns =
    binding === 'soap11' ? 'http://schemas.xmlsoap.org/soap/envelope/' : 'http://www.w3.org/2003/05/soap-envelope';
  const body = Buffer.from(
    `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="${ns}"><soap:Body><${op} xmlns="http://tempuri.org/">${params}</${op}></soap:Body></soap:Envelope>`,
  );
  const headers: [string, string][] =
    binding === 'soap11'
      ? [
          ['Content-Type', 'text/xml; charset=utf-8'],
          ['SOAPAction', `"http://tempuri.org/${op}"`],
        ]
      : [['Content-Type', `application/soap+xml; charset=utf-8; action="http://tempuri.org/${op}"`]];
  return { method: 'POST', path: `/${service}.asmx`, headers, body };
}

export const token = (id: string): Call => ({ service: 'PushNotificationMobile', op: 'GetTokenDevice', args: { id } });
export const school = (url: string): Call => ({
  service: 'NotificationNotes',
  op: 'GetStudentSchool',
  args: { school_base_url: url, show_active: '1' },
});
