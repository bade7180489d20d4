/**
 * The answer cache's data version on PostgreSQL (a counter a trigger moves): it moves with every
 * kind of write to the students, in the writer's transaction, and with nothing else; a version
 * asked for is never one read before it was asked, and a stuck read holds the next askers only
 * briefly; when it cannot be read nothing is kept. The cache itself: answer-cache.test.ts.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import { openStore } from '../../src/store/open/open-store.js';
import type { SqlStore } from '../../src/store/sql/sql-store.js';
import { counter, dataset, names } from '../helpers/answer-cache-lists.js';
import { bindingClients } from '../helpers/binding-clients.js';
import { cleanupTargets, postgresTarget, postgresUrl, withFreshStore } from '../helpers/store-targets.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { startTestServer } from '../helpers/test-server.js';

after(() => cleanupTargets());

/** A store reaching PostgreSQL through a TCP proxy (which can keep answers back), with two connections. */
async function proxiedStore(url: string): Promise<{ store: SqlStore; proxy: TcpProxy }> {
  const direct = new URL(url);
  const proxy = new TcpProxy(direct.hostname, Number(direct.port || 5432));
  await proxy.start();
  const proxied = new URL(url);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(proxy.port);
  return { store: await openStore(proxied.toString(), { poolSize: 2 }), proxy };
}

describe('the data version on PostgreSQL', { skip: postgresTarget.skip ?? false }, () => {
  test("moves with every statement writing the students, in the writer's transaction, and with nothing else", async () => {
    await withFreshStore(postgresTarget, async (store, db) => {
      const schema = new URL(db.url).searchParams.get('schema')!;
      const version = async (): Promise<number> => Number(await store.dataVersion());
      let last = await version();
      const moved = async (what: string): Promise<void> => {
        const now = await version();
        assert.ok(now > last, `${what}: ${last} → ${now}`);
        last = now;
      };
      // Each kind of statement, written with the schema named from a session on the default
      // search_path: the trigger finds its counter through its own table's schema.
      const writer = new pg.Client({ connectionString: postgresUrl });
      await writer.connect();
      try {
        const students = `"${schema}".students`;
        await writer.query(`insert into ${students} (id_student, seq) values ('x1', 1), ('x2', 2)`);
        await moved('insert');
        await writer.query(`update ${students} set "fullName" = 'X' where id_student = 'x1'`);
        await moved('update');
        await writer.query(
          `insert into ${students} (id_student, seq) values ('x1', 3) on conflict (id_student) do update set "ShowActive" = '1'`,
        );
        await moved('insert ... on conflict do update');
        await writer.query(`delete from ${students} where id_student = 'x2'`);
        await moved('delete');
        await writer.query(`truncate ${students}`);
        await moved('truncate');

        // Seen with the commit, not before; a rollback leaves it.
        await writer.query('begin');
        await writer.query(`insert into ${students} (id_student, seq) values ('x3', 4)`);
        assert.equal(await version(), last, 'not before the commit');
        await writer.query('commit');
        await moved('commit');
        await writer.query('begin');
        await writer.query(`delete from ${students}`);
        await writer.query('rollback');
        assert.equal(await version(), last, 'rolled back');
      } finally {
        await writer.end();
      }

      await store.importDataset(dataset(2), { replace: true });
      await moved('importDataset --replace');
      // Writes elsewhere change no list: devices, codes and marks leave the version alone.
      await db.sql(`insert into devices (id, token) values ('d9', 't9')`);
      await store.recordAuthCode('123456', '+15550100000', new Date());
      await store.importDataset({
        marks: [
          { id_student: 'c1', SubjectID: 'm', SubjectName: null, Mark: '1', Term: null, MarkDate: null, Note: null },
        ],
      });
      assert.equal(await version(), last, 'only the students move it');
    });
  });

  test('a version asked for while a read is in flight comes from a read begun after it was asked', async () => {
    const db = await postgresTarget.fresh();
    const { store, proxy } = await proxiedStore(db.url);
    try {
      const before = Number(await store.dataVersion());
      const held = proxy.holdReplies();
      const first = store.dataVersion();
      await held; // the database has read the version; the answer is on its way
      await db.sql(`update students set "fullName" = 'x'`); // a commit that ends now, not through the proxy
      const second = store.dataVersion(); // asked after it, while the first read is still in flight
      proxy.releaseReplies();
      assert.equal(Number(await first), before);
      assert.equal(Number(await second), before + 1, 'not the read in flight when it was asked');
    } finally {
      await store.close();
      await proxy.stop();
    }
  });

  test('a version read stuck on its connection holds the next askers only briefly', async () => {
    const db = await postgresTarget.fresh();
    const { store, proxy } = await proxiedStore(db.url);
    try {
      const before = await store.dataVersion(); // one connection open, and idle
      const held = proxy.holdReplies(); // that connection's answers stop coming
      const stuck = store.dataVersion();
      await held;
      // Asked while the read is stuck: its own read begins on another connection after a short wait.
      let released = false;
      const giveUp = setTimeout(() => {
        released = true; // never answered otherwise: end the test rather than hang it
        proxy.releaseReplies();
      }, 5000);
      const asked = await store.dataVersion();
      clearTimeout(giveUp);
      assert.equal(released, false, 'answered only once the stuck read ended');
      assert.equal(asked, before);
      proxy.releaseReplies();
      assert.equal(await stuck, before);
    } finally {
      await store.close();
      await proxy.stop();
    }
  });

  test('a version that cannot be read keeps nothing, and the list is answered as usual', async () => {
    const db = await postgresTarget.fresh();
    const server = await startTestServer({ env: { SIS_DATABASE_URL: db.url }, dataset: dataset(3) });
    try {
      const [binding] = bindingClients;
      const expected = ['Student 1', 'Student 2', 'Student 3'];
      const changed = ['Student 1', 'Changed', 'Student 3'];
      /** Hits and misses counted while `work` runs. */
      const counted = async (work: () => Promise<void>): Promise<[number, number]> => {
        const hits = await counter(server, 'sis_answer_cache_hits_total');
        const misses = await counter(server, 'sis_answer_cache_misses_total');
        await work();
        return [
          (await counter(server, 'sis_answer_cache_hits_total')) - hits,
          (await counter(server, 'sis_answer_cache_misses_total')) - misses,
        ];
      };
      const twice = (list: string[]) => async (): Promise<void> => {
        for (let i = 0; i < 2; i++) assert.deepEqual(await names(server, binding!), list);
      };
      assert.deepEqual(await counted(twice(expected)), [1, 1]);

      // The table gone (the lookup fails): answered from the database, nothing served or kept.
      await db.sql('alter table sis_data_versions rename to sis_data_versions_away');
      assert.deepEqual(await counted(twice(expected)), [0, 0]);
      await db.sql('alter table sis_data_versions_away rename to sis_data_versions');
      assert.deepEqual(await counted(twice(expected)), [2, 0], 'kept from before, the version unchanged');

      // The row gone (no version): writes go through unversioned, and nothing is kept meanwhile.
      await db.sql('delete from sis_data_versions');
      await db.sql(`update students set "fullName" = 'Changed' where id_student = 'c2'`);
      assert.deepEqual(await counted(twice(changed)), [0, 0]);
      // Back with a version never used before (a reused one could match an answer kept under it).
      await db.sql(`insert into sis_data_versions (name, version) values ('students', 1000)`);
      assert.deepEqual(await counted(twice(changed)), [1, 1]);
    } finally {
      await server.close();
    }
  });
});
