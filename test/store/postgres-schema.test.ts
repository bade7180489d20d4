/**
 * The PostgreSQL schema a store lives in is a startup parameter of every connection: an odd name
 * (a space, a double quote) reaches the pool's connections and the COPY session of a bulk import
 * alike, and nothing runs between a connection's opening and its first query (a `set
 * search_path` there once leaked the pool client when the connection was cut just then).
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { jsonDatasetSource } from '../../src/dataset/json-dataset-source.js';
import { DEMO_DATASET } from '../../src/store/import/demo-data.js';
import { openStore } from '../../src/store/open/open-store.js';
import { adminClient, cleanupTargets, POSTGRES_SKIP, postgresUrl } from '../helpers/store-targets.js';

after(cleanupTargets);

async function* text(...parts: string[]): AsyncGenerator<string> {
  yield* parts;
}

describe('a PostgreSQL schema with an odd name', { skip: POSTGRES_SKIP ?? undefined }, () => {
  const schema = `sis test "odd" ${process.pid}`;
  const quoted = `"${schema.replace(/"/g, '""')}"`;
  after(async () => void (await (await adminClient()).query(`drop schema if exists ${quoted} cascade`)));

  test('holds the tables, answers reads and takes a streamed (COPY) import', async () => {
    const url = `${postgresUrl}${postgresUrl.includes('?') ? '&' : '?'}schema=${encodeURIComponent(schema)}`;
    const store = await openStore(url);
    try {
      await store.admin.importStream(jsonDatasetSource(text(JSON.stringify(DEMO_DATASET))));
      assert.equal(await store.deviceToken('1'), 'tok-AAA-111');
      const admin = await adminClient();
      const { rows } = await admin.query<{ n: string }>(`select count(*)::text as n from ${quoted}.students`);
      assert.equal(rows[0]!.n, String(DEMO_DATASET.students!.length));
    } finally {
      await store.close();
    }
  });
});
