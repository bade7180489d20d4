/**
 * SIS_TLS_CERT and SIS_TLS_KEY, read and checked at start: a file the service's user cannot read,
 * a file that is not PEM, or a key that is not the certificate's fails the start with one line
 * saying which, never the first client's handshake.
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import { processUser } from '../errors/startup-errors.js';

export interface TlsFiles {
  readonly cert: Buffer;
  readonly key: Buffer;
}

/** Reads and checks the certificate and key now, so a wrong file fails the start, not the first client. */
export function loadTls(
  certPath: string | undefined,
  keyPath: string | undefined,
  problems: string[],
): TlsFiles | null {
  const hasCert = certPath !== undefined && certPath !== '';
  const hasKey = keyPath !== undefined && keyPath !== '';
  if (!hasCert && !hasKey) return null;
  if (!hasCert || !hasKey) {
    problems.push(
      `${hasCert ? 'SIS_TLS_KEY' : 'SIS_TLS_CERT'}: required when ${hasCert ? 'SIS_TLS_CERT' : 'SIS_TLS_KEY'} is set`,
    );
    return null;
  }
  const read = (name: string, path: string): Buffer | null => {
    try {
      return readFileSync(path);
    } catch (error) {
      problems.push(`${name}=${JSON.stringify(path)}: ${unreadable(error as NodeJS.ErrnoException)}`);
      return null;
    }
  };
  const cert = read('SIS_TLS_CERT', certPath);
  const key = read('SIS_TLS_KEY', keyPath);
  if (cert === null || key === null) return null;
  const problem = tlsPairProblem(cert, key, certPath, keyPath);
  if (problem !== null) {
    problems.push(problem);
    return null;
  }
  return { cert, key };
}

function unreadable(error: NodeJS.ErrnoException): string {
  if (error.code === 'ENOENT') return 'no such file';
  if (error.code === 'EACCES' || error.code === 'EPERM')
    return `not readable by user ${processUser()}: give the user read permission on it`;
  if (error.code === 'EISDIR') return 'a directory, not a file';
  return `cannot read the file (${error.code ?? error.message})`;
}

/** Null when the certificate and key load and belong together; else which is wrong, and how. */
function tlsPairProblem(cert: Buffer, key: Buffer, certPath: string, keyPath: string): string | null {
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(cert);
  } catch (error) {
    return `SIS_TLS_CERT=${JSON.stringify(certPath)}: not a PEM certificate (${(error as Error).message})`;
  }
  let privateKey: ReturnType<typeof createPrivateKey>;
  try {
    privateKey = createPrivateKey(key);
  } catch (error) {
    const encrypted = (error as NodeJS.ErrnoException).code === 'ERR_MISSING_PASSPHRASE';
    return `SIS_TLS_KEY=${JSON.stringify(keyPath)}: ${encrypted ? 'the key is encrypted; give it without a passphrase (openssl pkey -in KEY -out KEY.plain)' : `not a PEM private key (${(error as Error).message})`}`;
  }
  if (!certificate.checkPrivateKey(privateKey)) {
    return `SIS_TLS_KEY=${JSON.stringify(keyPath)} does not match the certificate in SIS_TLS_CERT=${JSON.stringify(certPath)}: give the key the certificate was issued for`;
  }
  try {
    createSecureContext({ cert, key });
  } catch (error) {
    return `SIS_TLS_CERT/SIS_TLS_KEY: not a usable certificate and key (${(error as Error).message})`;
  }
  return null;
}
