/**
 * Start-up failures (see startup-failures.test.ts) from the TLS files, made by openssl: a key that
 * is not the certificate's, a key the service user (nobody) cannot read.
 */
import { chmodSync, chownSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { HAVE_OPENSSL, makeCertificate } from '../helpers/certificates.js';
import { runToExit } from '../helpers/serve-process.js';
import { assertOneLine, newDir, NOBODY, NOBODY_SKIP } from '../helpers/startup-failure.js';

describe(
  'start-up failures: TLS files',
  { skip: HAVE_OPENSSL ? false : 'openssl is not installed: cannot make test certificates' },
  () => {
    it("a key that is not the certificate's: both named (78)", async () => {
      const dir = newDir();
      const a = makeCertificate(dir, 'a');
      const b = makeCertificate(dir, 'b');
      const exit = await runToExit(`sqlite:${join(dir, 'sis.db')}`, { SIS_TLS_CERT: a.cert, SIS_TLS_KEY: b.key });
      assertOneLine(
        exit,
        78,
        'ERR_CONFIG',
        new RegExp(
          `^sis serve: invalid configuration: SIS_TLS_KEY="${b.key}" does not match the certificate in SIS_TLS_CERT="${a.cert}": give the key the certificate was issued for$`,
        ),
      );
    });

    it('a key the service user cannot read (78)', { skip: NOBODY_SKIP }, async () => {
      const dir = newDir();
      chownSync(dir, NOBODY.uid, NOBODY.gid);
      const a = makeCertificate(dir, 'a');
      chmodSync(a.key, 0o600); // root's
      chmodSync(a.cert, 0o644);
      const exit = await runToExit(
        `sqlite:${join(dir, 'sis.db')}`,
        { SIS_TLS_CERT: a.cert, SIS_TLS_KEY: a.key },
        { user: NOBODY },
      );
      assertOneLine(
        exit,
        78,
        'ERR_CONFIG',
        new RegExp(
          `^sis serve: invalid configuration: SIS_TLS_KEY="${a.key}": not readable by user nobody \\(uid 65534\\): give the user read permission on it$`,
        ),
      );
    });
  },
);
