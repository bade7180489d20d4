/**
 * The answer cache with several instances on one PostgreSQL schema: two `sis serve` processes
 * and a third service in this process, each keeping lists in its own cache. Whoever writes the
 * students (`sis import`, with and without --replace; the third service's store, as the demo
 * data and the tools write; SQL from another session: insert, update, delete, truncate), the very
 * next request to every instance, over every binding, answers the new list; the request after
 * that is served from the cache (the hit counters rise), so the cache is really in use; and under
 * concurrent requests (which share version reads) while commits follow each other, no answer is
 * older than a commit that ended before it was asked.
 * (A service process itself never writes the students: AuthCode writes codes and the outbox.)
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { GetStudentSchool } from '../../src/operations/get-student-school.js';
import type { Operation } from '../../src/operations/index.js';
import type { StudentRecord } from '../../src/store/store.js';
import { bindingClients } from '../helpers/binding-clients.js';
import { rawRequest } from '../helpers/raw-http.js';
import { runSis, startServe, stopServe } from '../helpers/serve-process.js';
import type { ServeProcess } from '../helpers/serve-process.js';
import { adminClient, cleanupTargets, newSchema, POSTGRES_SKIP } from '../helpers/store-targets.js';
import { startTestServer } from '../helpers/test-server.js';
import type { TestServer } from '../helpers/test-server.js';

const SCHOOL = 'http://instances.example';
const ARGS = { school_base_url: SCHOOL, show_active: '1' };
const student = (n: number, fullName = `Student ${n}`): StudentRecord => ({
  id_student: `s${n}`,
  fullName,
  id_device: null,
  ShowActive: '1',
  school_base_url: SCHOOL,
});
const dir = mkdtempSync(join(tmpdir(), 'sis-cache-instances-'));

async function metric(url: string, name: string): Promise<number> {
  const res = await rawRequest(url, { method: 'GET', path: '/metrics', headers: [] });
  const line = res.body
    .toString('utf8')
    .split('\n')
    .find((l) => l.startsWith(`${name} `));
  return line === undefined ? Number.NaN : Number(line.split(' ')[1]);
}

async function names(url: string, binding: (typeof bindingClients)[number]): Promise<string[]> {
  const { res, value } = await binding.call(url, GetStudentSchool as Operation, ARGS);
  assert.equal(res.status, 200, res.body.toString('utf8'));
  return (value as { fullName: string }[]).map((s) => s.fullName);
}

describe('the answer cache of several instances on one PostgreSQL schema', { skip: POSTGRES_SKIP ?? undefined }, () => {
  let databaseUrl: string;
  let schema: string;
  let a: ServeProcess;
  let b: ServeProcess;
  let c: TestServer;
  const instances = (): { name: string; url: string }[] => [
    { name: 'process A', url: a.url },
    { name: 'process B', url: b.url },
    { name: 'the writing service', url: c.url },
  ];

  /** Every instance answers `expected` at once over every binding, then again from its cache. */
  async function seenEverywhere(expected: readonly string[]): Promise<void> {
    for (const { name, url } of instances()) {
      const hits = await metric(url, 'sis_answer_cache_hits_total');
      for (const binding of bindingClients)
        assert.deepEqual(await names(url, binding), expected, `${name}, ${binding.name}: the next request`);
      for (const binding of bindingClients)
        assert.deepEqual(await names(url, binding), expected, `${name}, ${binding.name}: again`);
      assert.equal(
        (await metric(url, 'sis_answer_cache_hits_total')) - hits,
        bindingClients.length,
        `${name}: the second round from the cache`,
      );
    }
  }

  async function sisImport(file: string, students: readonly StudentRecord[], ...options: string[]): Promise<void> {
    const path = join(dir, file);
    writeFileSync(path, JSON.stringify({ students }));
    const done = await runSis(['import', path, ...options], databaseUrl);
    assert.equal(done.code, 0, done.stderr);
  }

  /** SQL from a session of its own, on the default search_path (the table named with its schema). */
  async function sql(text: string): Promise<void> {
    await (await adminClient()).query(text.replace('students', `"${schema}".students`));
  }

  before(async () => {
    ({ schema, url: databaseUrl } = newSchema('cache'));
    [a, b] = await Promise.all([startServe(databaseUrl), startServe(databaseUrl)]);
    c = await startTestServer({ env: { SIS_DATABASE_URL: databaseUrl } });
  });

  after(async () => {
    await c?.close();
    const codes = await Promise.all([a, b].filter((i) => i !== undefined).map((i) => stopServe(i)));
    rmSync(dir, { recursive: true, force: true });
    await cleanupTargets();
    assert.deepEqual(codes, [0, 0], 'both stop cleanly');
  });

  test('an empty school is kept too', async () => {
    await seenEverywhere([]);
  });

  test('`sis import` of new students and of changed ones', async () => {
    await sisImport('first.json', [student(1), student(2), student(3)]);
    await seenEverywhere(['Student 1', 'Student 2', 'Student 3']);
    await sisImport('second.json', [student(2, 'Second'), student(4)]);
    await seenEverywhere(['Student 1', 'Second', 'Student 3', 'Student 4']);
  });

  test('`sis import --replace`', async () => {
    await sisImport('replace.json', [student(5), student(6)], '--replace');
    await seenEverywhere(['Student 5', 'Student 6']);
  });

  test('a write through the store of one of the services', async () => {
    await c.app.store.importDataset({ students: [student(5, 'Fifth')] });
    await seenEverywhere(['Fifth', 'Student 6']);
  });

  test('SQL from another session: update, insert, delete, truncate', async () => {
    await sql(`update students set "fullName" = 'Sixth' where id_student = 's6'`);
    await seenEverywhere(['Fifth', 'Sixth']);
    await sql(
      `insert into students (id_student, "fullName", "ShowActive", school_base_url, seq) values ('s7', 'Seventh', '1', '${SCHOOL}', 100)`,
    );
    await seenEverywhere(['Fifth', 'Sixth', 'Seventh']);
    await sql(`delete from students where id_student = 's5'`);
    await seenEverywhere(['Sixth', 'Seventh']);
    await sql('truncate students');
    await seenEverywhere([]);
  });

  test('under concurrent requests, no answer is older than a commit that ended before it was asked', async () => {
    await sql(
      `insert into students (id_student, "fullName", "ShowActive", school_base_url, seq) values ('v', 'v0', '1', '${SCHOOL}', 200)`,
    );
    const hits = await Promise.all(instances().map(({ url }) => metric(url, 'sis_answer_cache_hits_total')));
    let committed = 0;
    let answers = 0;
    const until = Date.now() + 1500;
    const writer = async (): Promise<void> => {
      for (let k = 1; Date.now() < until; k++) {
        await sql(`update students set "fullName" = 'v${k}' where id_student = 'v'`);
        committed = k;
        await new Promise((resolve) => setTimeout(resolve, 40));
      }
    };
    const reader = async (url: string, binding: (typeof bindingClients)[number]): Promise<void> => {
      while (Date.now() < until) {
        const floor = committed;
        const [name] = await names(url, binding);
        assert.ok(Number(name!.slice(1)) >= floor, `${binding.name} answered ${name} after v${floor} was committed`);
        answers++;
      }
    };
    // Two readers per binding and instance: several requests in flight share version reads.
    const readers = instances().flatMap(({ url }) =>
      bindingClients.flatMap((binding) => [reader(url, binding), reader(url, binding)]),
    );
    await Promise.all([writer(), ...readers]);
    assert.ok(committed > 1 && answers > committed, `${committed} commits, ${answers} answers`);
    const after = await Promise.all(instances().map(({ url }) => metric(url, 'sis_answer_cache_hits_total')));
    assert.ok(
      after.some((n, i) => n > hits[i]!),
      'answers were served from the caches meanwhile',
    );
  });
});
