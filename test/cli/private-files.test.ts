/**
 * Files the service and `sis` create hold personal data (phones, codes, students, requests) and are
 * created readable by their owner alone, mode 0600, whatever the umask: the SQLite database with
 * its -wal and -shm files, `sis export --output`, `sis shadow report --html`.
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { shadowCli } from '../helpers/shadow-run.js';
import { dir, sis } from '../helpers/sis-commands.js';
import { startTestServer } from '../helpers/test-server.js';

const modeOf = (file: string): string => (statSync(file).mode & 0o777).toString(8);

describe('files created 0600', () => {
  let umask: number;
  before(() => {
    // The widest umask there is: the mode must come from the code, not from it.
    umask = process.umask(0);
  });
  after(() => process.umask(umask));

  it('creates the SQLite database, its -wal and -shm 0600', async () => {
    const server = await startTestServer({ env: { SIS_DEMO_DATA: 'true' } });
    try {
      const res = await fetch(`${server.url}/PushNotificationMobile.asmx/GetTokenDevice?id=1`);
      assert.equal(res.status, 200);
      await res.arrayBuffer();
      for (const file of [server.databaseFile, `${server.databaseFile}-wal`, `${server.databaseFile}-shm`]) {
        assert.ok(existsSync(file), file);
        assert.equal(modeOf(file), '600', file);
      }
    } finally {
      await server.close();
    }
  });

  it('writes sis export --output and sis shadow report --html 0600, replacing a wider file', async () => {
    const database = `sqlite:${join(dir, 'private.db')}`;
    assert.equal((await sis('migrate', [], { SIS_DATABASE_URL: database })).code, 0);
    assert.equal(modeOf(join(dir, 'private.db')), '600');
    const exported = join(dir, 'private-export.json');
    const outcome = await sis('export', ['--output', exported], { SIS_DATABASE_URL: database });
    assert.equal(outcome.code, 0, outcome.stderr);
    assert.equal(modeOf(exported), '600');
    const html = join(dir, 'private-report.html');
    for (const before of ['none', 'a file of mode 0644']) {
      const report = await shadowCli(['report', '--html', html], { SIS_DATABASE_URL: database });
      assert.equal(report.code, 0, report.err);
      assert.equal(modeOf(html), '600', `written over ${before}`);
      chmodSync(html, 0o644);
    }
  });
});
