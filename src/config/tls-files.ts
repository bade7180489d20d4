/** The HTTPS certificate and key, read and checked at start (config.ts). */
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';

/** Reads and checks the certificate and key now, so a wrong file fails the start, not the first client. */
export function loadTls(
  certPath: string | undefined,
  keyPath: string | undefined,
  problems: string[],
): { readonly cert: Buffer; readonly key: Buffer } | null {
  const hasCert = certPath !== undefined && certPath !== '';
  const hasKey = keyPath !== undefined && keyPath !== '';
  if (!hasCert && !hasKey) return null;
  if (!hasCert || !hasKey) {
    problems.push(`${hasCert ? 'SIS_TLS_KEY' : 'SIS_TLS_CERT'}: required when ${hasCert ? 'SIS_TLS_CERT' : 'SIS_TLS_KEY'} is set`);
    return null;
  }
  const read = (name: string, path: string): Buffer | null => {
    try {
      return readFileSync(path);
    } catch (error) {
      problems.push(`${name}=${JSON.stringify(path)}: cannot read the file (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
      return null;
    }
  };
  const cert = read('SIS_TLS_CERT', certPath);
  const key = read('SIS_TLS_KEY', keyPath);
  if (cert === null || key === null) return null;
  try {
    createSecureContext({ cert, key });
  } catch (error) {
    problems.push(`SIS_TLS_CERT/SIS_TLS_KEY: not a usable PEM certificate and matching key (${(error as Error).message})`);
    return null;
  }
  return { cert, key };
}
