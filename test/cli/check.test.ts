/**
 * `sis check`, in process against real things: SQLite files in each state (missing, current,
 * pending migrations, newer, not a database), PostgreSQL, TLS files made by openssl, Redis and a
 * real SMS gateway. One line per check, `ok`, `skipped` or what is wrong; 0 only when all pass;
 * the database is never changed.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, describe, it } from 'node:test';
import { createCheckCommand } from '../../src/cli/check-command.js';
import { openStore } from '../../src/store/open/open-store.js';
import { LATEST_SCHEMA_VERSION, migrations } from '../../src/store/schema/migration-list.js';
import { HAVE_OPENSSL, makeCertificate } from '../helpers/certificates.js';
import { runToExit } from '../helpers/serve-process.js';
import { closedPort, startSmsGateway } from '../helpers/sms-gateway.js';
import { cleanupTargets, newSchema, POSTGRES_SKIP } from '../helpers/store-targets.js';

const dir = mkdtempSync(join(tmpdir(), 'sis-check-'));
let counter = 0;
const dbPath = (): string => join(dir, `db-${++counter}.db`);
after(async () => {
  rmSync(dir, { recursive: true, force: true });
  await cleanupTargets();
});

async function check(
  env: Record<string, string>,
): Promise<{ code: number; lines: Record<string, string>; stdout: string }> {
  let stdout = '';
  const output = { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stdout += t) } };
  const code = await createCheckCommand(output).run([], env);
  const lines: Record<string, string> = {};
  for (const line of stdout.split('\n').filter((l) => l !== '')) {
    const m = /^([a-z ]+): (.*)$/.exec(line);
    assert.ok(m !== null, `a line per check: ${line}`);
    lines[m[1]!] = lines[m[1]!] === undefined ? m[2]! : `${lines[m[1]!]}\n${m[2]!}`;
  }
  return { code, lines, stdout };
}

const sha256 = (path: string): string => createHash('sha256').update(readFileSync(path)).digest('hex');

describe('sis check', () => {
  it('a database not made yet, nothing else configured: every line passes (0), nothing is created', async () => {
    const path = dbPath();
    const { code, lines, stdout } = await check({ SIS_DATABASE_URL: `sqlite:${path}` });
    assert.equal(code, 0, stdout);
    assert.deepEqual(Object.keys(lines), ['configuration', 'database', 'tls', 'redis', 'sms gateway']);
    assert.equal(lines['configuration'], 'ok');
    assert.equal(lines['database'], `ok (${path} does not exist yet: the service creates and migrates it at start)`);
    assert.equal(lines['tls'], 'skipped (SIS_TLS_CERT is not set)');
    assert.equal(lines['redis'], 'skipped (SIS_REDIS_URL is not set)');
    assert.equal(lines['sms gateway'], 'skipped (no gateway configured (SIS_SMS_GATEWAY and its settings))');
    assert.equal(existsSync(path), false);
  });

  it('a current database, a pending migration, a newer schema (1), a file that is not a database (1); none changed', async () => {
    const path = dbPath();
    await (await openStore(`sqlite:${path}`)).close();
    const files = readdirSync(dir).sort();
    const before = sha256(path);
    let result = await check({ SIS_DATABASE_URL: `sqlite:${path}` });
    assert.equal(result.code, 0);
    assert.equal(result.lines['database'], `ok (${path}: schema version ${LATEST_SCHEMA_VERSION}, up to date)`);
    assert.equal(sha256(path), before);
    assert.deepEqual(readdirSync(dir).sort(), files, 'no -wal or -shm left behind');

    const raw = new DatabaseSync(path);
    raw.prepare('delete from sis_migrations where version = ?').run(LATEST_SCHEMA_VERSION);
    raw.close();
    result = await check({ SIS_DATABASE_URL: `sqlite:${path}` });
    assert.equal(result.code, 0, 'pending migrations are applied at start: not a failure');
    assert.equal(
      result.lines['database'],
      `ok (${path}: schema version ${migrations.at(-2)!.version}; migration ${LATEST_SCHEMA_VERSION} to reach ${LATEST_SCHEMA_VERSION} applied at start or by \`sis migrate\`)`,
    );

    const future = LATEST_SCHEMA_VERSION + 5;
    const raw2 = new DatabaseSync(path);
    raw2
      .prepare('insert into sis_migrations (version, name, applied_at) values (?, ?, ?)')
      .run(future, 'later', 'then');
    raw2.close();
    const stamped = sha256(path);
    result = await check({ SIS_DATABASE_URL: `sqlite:${path}` });
    assert.equal(result.code, 1);
    assert.match(
      result.lines['database']!,
      new RegExp(
        `^FAILED: the database has schema version ${future}, newer than this program knows \\(${LATEST_SCHEMA_VERSION}\\)`,
      ),
    );
    assert.equal(sha256(path), stamped, 'a newer database is left as it is');

    const garbage = dbPath();
    writeFileSync(garbage, 'not a database at all\n'.repeat(50));
    result = await check({ SIS_DATABASE_URL: `sqlite:${garbage}` });
    assert.equal(result.code, 1);
    assert.match(
      result.lines['database']!,
      /^FAILED: the database file \S+ is not a usable SQLite database \(file is not a database\)/,
    );
  });

  it('invalid settings: one line each, the rest skipped (1)', async () => {
    const { code, stdout } = await check({
      SIS_DATABASE_URL: `sqlite:${dbPath()}`,
      PORT: 'eighty',
      SIS_RATE_LIMIT: 'lots',
    });
    assert.equal(code, 1);
    assert.equal(
      stdout,
      'configuration: FAILED: PORT="eighty": expected a whole number from 0 to 65535\n' +
        'configuration: FAILED: SIS_RATE_LIMIT="lots": expected N/window such as 100/1s, 6000/1m or 50/500ms\n' +
        'database: skipped (the configuration is invalid)\n' +
        'tls: skipped (the configuration is invalid)\n' +
        'redis: skipped (the configuration is invalid)\n' +
        'sms gateway: skipped (the configuration is invalid)\n',
    );
  });

  it(
    'PostgreSQL: read only, a schema not made yet passes, and stays not made',
    { skip: POSTGRES_SKIP ?? false },
    async () => {
      const { url, schema } = newSchema('check');
      const result = await check({ SIS_DATABASE_URL: url });
      assert.equal(result.code, 0, result.stdout);
      assert.match(
        result.lines['database']!,
        new RegExp(
          `^ok \\(\\S+/\\S+ \\(schema ${schema}\\): no tables yet, created at start or by \`sis migrate\`\\)$`,
        ),
      );
      await (await openStore(url)).close();
      assert.match((await check({ SIS_DATABASE_URL: url })).lines['database']!, /schema version \d+, up to date\)$/);
    },
  );

  it(
    'TLS: the certificate named with its expiry; a key of another certificate fails the configuration',
    { skip: HAVE_OPENSSL ? false : 'openssl is not installed' },
    async () => {
      const a = makeCertificate(dir, 'a', 30);
      const b = makeCertificate(dir, 'b', 30);
      const good = await check({ SIS_DATABASE_URL: `sqlite:${dbPath()}`, SIS_TLS_CERT: a.cert, SIS_TLS_KEY: a.key });
      assert.equal(good.code, 0, good.stdout);
      assert.match(good.lines['tls']!, /^ok \(CN=a\.test, valid until \d{4}-\d\d-\d\dT[\d:.]+Z \((29|30) days\)\)$/);
      const bad = await check({ SIS_DATABASE_URL: `sqlite:${dbPath()}`, SIS_TLS_CERT: a.cert, SIS_TLS_KEY: b.key });
      assert.equal(bad.code, 1);
      assert.match(
        bad.lines['configuration']!,
        /^FAILED: SIS_TLS_KEY=".*b-key\.pem" does not match the certificate in SIS_TLS_CERT=".*a-cert\.pem"/,
      );
    },
  );

  it('Redis and the SMS gateway: ok when they answer (no message sent), the reason when not (1)', async () => {
    const gateway = await startSmsGateway('check-secret-of-at-least-32-bytes-long');
    const down = await closedPort();
    const redis = process.env['SIS_TEST_REDIS_URL'];
    try {
      const base = {
        SIS_DATABASE_URL: `sqlite:${dbPath()}`,
        SIS_SMS_WEBHOOK_SECRET: 'check-secret-of-at-least-32-bytes-long',
      };
      const up = await check({
        ...base,
        SIS_SMS_WEBHOOK_URL: gateway.url,
        ...(redis === undefined ? {} : { SIS_REDIS_URL: redis }),
      });
      assert.equal(up.code, 0, up.stdout);
      assert.match(
        up.lines['sms gateway']!,
        new RegExp(`^ok \\(${new URL(gateway.url).origin} answered 405 to a HEAD request in \\d+ ms\\)$`),
      );
      assert.equal(gateway.received.length, 0, 'no message was sent');
      if (redis !== undefined) assert.match(up.lines['redis']!, /^ok \(redis:\/\/\S+ answered PONG in \d+ ms\)$/);

      const failed = await check({
        ...base,
        SIS_SMS_WEBHOOK_URL: `http://127.0.0.1:${down}/sms`,
        SIS_REDIS_URL: `redis://127.0.0.1:${down}`,
      });
      assert.equal(failed.code, 1);
      assert.match(
        failed.lines['sms gateway']!,
        new RegExp(
          `^FAILED: http://127\\.0\\.0\\.1:${down} does not answer \\(ECONNREFUSED\\): codes would wait in the outbox`,
        ),
      );
      assert.match(
        failed.lines['redis']!,
        new RegExp(
          `^FAILED: redis://127\\.0\\.0\\.1:${down} does not answer \\(connect ECONNREFUSED 127\\.0\\.0\\.1:${down}\\): rate limits would not be enforced`,
        ),
      );
    } finally {
      await gateway.close();
    }
  });

  it('is a command of the real CLI, listed in its help, with its exit status', async () => {
    const help = await runToExit('', {}, { args: ['help'] });
    assert.match(
      help.stdout,
      /^ {2}check +check the configuration, database, TLS, Redis and SMS gateway before a deploy$/m,
    );
    const bad = await runToExit(
      `sqlite:${dbPath()}`,
      { SIS_TLS_CERT: join(dir, 'missing.pem'), SIS_TLS_KEY: join(dir, 'missing.pem') },
      { args: ['check'] },
    );
    assert.equal(bad.code, 1);
    assert.match(bad.stdout, /^configuration: FAILED: SIS_TLS_CERT=".*missing\.pem": no such file$/m);
  });
});
