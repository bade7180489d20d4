/**
 * Several instances on one PostgreSQL database, as real processes: two `sis serve` started at the
 * same moment on a new schema (they migrate it once between them), data written through one
 * path (`sis import`, `sis devices`, an AuthCode over HTTP) answered by both at once, and their
 * connections killed under them without either process going down. (Lists kept in the answer
 * cache of each process: answer-cache-instances.test.ts.)
 */
import assert from 'node:assert/strict';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { OPERATION_FAILED } from '../../src/bindings/dispatch.js';
import { operations } from '../../src/operations/index.js';
import type { Operation } from '../../src/operations/index.js';
import { migrations } from '../../src/store/schema/migration-list.js';
import { bindingClients } from '../helpers/binding-clients.js';
import { runSis, startServe, stopServe } from '../helpers/serve-process.js';
import type { ServeProcess } from '../helpers/serve-process.js';
import { adminClient, cleanupTargets, newSchema, POSTGRES_SKIP } from '../helpers/store-targets.js';

const op = (name: string): Operation => operations.find((o) => o.name === name)!;
const soap = bindingClients.find((c) => c.name === 'soap11')!;
const get = bindingClients.find((c) => c.name === 'httpget')!;
const dir = mkdtempSync(join(tmpdir(), 'sis-instances-'));

async function token(
  instance: ServeProcess,
  id: string,
  binding = soap,
): Promise<{ status: number; value: unknown; body: string }> {
  const { res, value } = await binding.call(instance.url, op('GetTokenDevice'), { id });
  return { status: res.status, value, body: res.body.toString('utf8') };
}

describe('two service processes on one PostgreSQL schema', { skip: POSTGRES_SKIP ?? undefined }, () => {
  const applicationName = `sis-instances-${process.pid}`;
  let databaseUrl: string;
  let a: ServeProcess;
  let b: ServeProcess;

  before(async () => {
    const { url } = newSchema('instances');
    databaseUrl = `${url}&application_name=${applicationName}`;
    // Started together on an empty schema: both migrate, the advisory lock makes it once.
    [a, b] = await Promise.all([startServe(databaseUrl), startServe(databaseUrl)]);
  });

  after(async () => {
    const codes = await Promise.all([a, b].filter((i) => i !== undefined).map((i) => stopServe(i)));
    rmSync(dir, { recursive: true, force: true });
    await cleanupTargets();
    assert.deepEqual(codes, [0, 0], 'both stop cleanly');
  });

  test('the schema was migrated once', async () => {
    const admin = await adminClient();
    const schema = new URL(databaseUrl).searchParams.get('schema');
    const rows = await admin.query(`select version from "${schema}".sis_migrations order by version`);
    assert.deepEqual(
      rows.rows.map((r: { version: number }) => r.version),
      migrations.map((m) => m.version),
    );
  });

  test('an import through `sis import` is answered by both at once', async () => {
    assert.equal((await token(a, 'shared')).value, null);
    const file = join(dir, 'data.json');
    writeFileSync(file, JSON.stringify({ devices: [{ id: 'shared', token: 'from the import' }] }));
    const imported = await runSis(['import', file], databaseUrl);
    assert.equal(imported.code, 0, imported.stderr);
    assert.equal((await token(a, 'shared')).value, 'from the import');
    assert.equal((await token(b, 'shared', get)).value, 'from the import');

    assert.equal((await runSis(['devices', 'set', 'shared', 'changed'], databaseUrl)).code, 0);
    assert.equal((await token(b, 'shared')).value, 'changed');
    assert.equal((await token(a, 'shared', get)).value, 'changed');
  });

  test('an AuthCode recorded through one instance is in the database the other uses', async () => {
    const { res } = await soap.call(a.url, op('AuthCode'), { code: 'via-a', phone: '+15550100001' });
    assert.equal(res.status, 200);
    await get.call(b.url, op('AuthCode'), { code: 'via-b', phone: '+15550100002' });
    const stats = await runSis(['stats'], databaseUrl);
    assert.match(stats.stdout, /^auth_codes\t2$/m);
  });

  test('their connections killed under them: no crash, a clean fault at worst, then answers', async () => {
    const admin = await adminClient();
    const killed = await admin.query(
      `select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and application_name = $1`,
      [applicationName],
    );
    assert.ok(killed.rows.length >= 2, `terminated ${killed.rows.length} connections`);
    // pg_terminate_backend only signals: wait until those backends have gone (and told their clients).
    for (let i = 0; i < 100; i++) {
      const left = await admin.query(`select count(*)::int as n from pg_stat_activity where application_name = $1`, [
        applicationName,
      ]);
      if (left.rows[0].n === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    for (const instance of [a, b]) {
      const first = await token(instance, 'shared');
      assert.ok(first.status === 200 || (first.status === 500 && first.body.includes(OPERATION_FAILED)), first.body);
      for (let i = 0; i < 3; i++)
        assert.equal((await token(instance, 'shared', i % 2 === 0 ? soap : get)).value, 'changed');
      assert.equal(instance.process.exitCode, null, 'still running');
    }
  });
});
