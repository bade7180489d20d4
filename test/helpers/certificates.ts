/** Self-signed certificates made at test time with openssl, for the HTTPS and TLS-file tests. */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/** Whether openssl can be run here (tests that need certificates skip, saying so, where it cannot). */
export const HAVE_OPENSSL = ((): boolean => {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** Writes `NAME-cert.pem` and `NAME-key.pem` into `dir`: an RSA key and a certificate for 127.0.0.1. */
export function makeCertificate(dir: string, name: string, days = 2): { cert: string; key: string } {
  const cert = join(dir, `${name}-cert.pem`);
  const key = join(dir, `${name}-key.pem`);
  const subject = ['-subj', `/CN=${name}.test`, '-addext', 'subjectAltName=IP:127.0.0.1'];
  const args = ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', String(days)];
  execFileSync('openssl', [...args, ...subject], { stdio: 'ignore' });
  return { cert, key };
}
