/**
 * The real service on each store: the same requests over HTTP GET and SOAP (1.1 and 1.2) give the
 * same answers on SQLite and PostgreSQL, and what AuthCode records lands in that database.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { operations } from '../../src/operations/index.js';
import type { Operation } from '../../src/operations/index.js';
import { openStore } from '../../src/store/open/open-store.js';
import { bindingClients } from '../helpers/binding-clients.js';
import { cleanupTargets, storeTargets } from '../helpers/store-targets.js';
import type { FreshDatabase } from '../helpers/store-targets.js';
import { startTestServer } from '../helpers/test-server.js';
import type { TestServer } from '../helpers/test-server.js';

after(cleanupTargets);

const op = (name: string): Operation => operations.find((o) => o.name === name)!;
const clients = bindingClients.filter((c) => c.name === 'httpget' || c.name === 'soap11' || c.name === 'soap12');

const dataset = {
  students: [
    {
      id_student: '1',
      fullName: "O'Brien & <Sons>",
      id_device: 'dev-001',
      ShowActive: '1',
      school_base_url: 'http://a.example',
    },
    {
      id_student: '3',
      fullName: '\u0639\u0644\u064a',
      id_device: 'dev-003',
      ShowActive: '0',
      school_base_url: 'http://a.example',
    },
    {
      id_student: '2',
      fullName: 'Zo\u00eb \u{1F600}',
      id_device: 'dev-002',
      ShowActive: '1',
      school_base_url: 'http://a.example',
    },
    { id_student: '10', fullName: 'Plain', id_device: null, ShowActive: 'Y', school_base_url: 'http://b.example' },
    { id_student: '11', fullName: '', id_device: '', ShowActive: 'Y', school_base_url: 'http://b.example' },
  ],
  devices: [
    { id: '1', token: 'tok-AAA-111' },
    { id: 'esc', token: 'a<b & c>"d" \'e\' \u00e9\u00e8 \u{1F600}' },
    { id: 'empty', token: '' },
    { id: 'nulltok', token: null },
  ],
};

for (const target of storeTargets) {
  describe(`the service on ${target.name}`, () => {
    if (target.skip !== null) {
      test(target.name, (t) => t.skip(target.skip!));
      return;
    }
    let db: FreshDatabase;
    let server: TestServer;
    before(async () => {
      db = await target.fresh();
      // The store is opened here, on its own database (a fresh schema on PostgreSQL), and given to the service.
      server = await startTestServer({ store: await openStore(db.url), dataset });
    });
    after(() => server?.close());

    for (const client of clients) {
      test(`GetTokenDevice over ${client.name}`, async () => {
        const call = (id: string) => client.call(server.url, op('GetTokenDevice'), { id });
        assert.equal((await call('1')).value, 'tok-AAA-111');
        assert.equal((await call('esc')).value, dataset.devices[1]!.token);
        assert.equal((await call('empty')).value, '');
        assert.equal((await call('nulltok')).value, null);
        assert.equal((await call('unknown')).value, null);
        assert.equal((await call('1')).res.status, 200);
      });

      test(`GetStudentSchool over ${client.name}`, async () => {
        const call = (school_base_url: string, show_active: string) =>
          client.call(server.url, op('GetStudentSchool'), { school_base_url, show_active });
        const a = await call('http://a.example', '1');
        assert.equal(a.res.status, 200);
        // StudentInfo on the wire: the school is what was asked for, not repeated; a null field is left out.
        assert.deepEqual(a.value, [
          { id_student: '1', fullName: "O'Brien & <Sons>", id_device: 'dev-001', ShowActive: '1' },
          { id_student: '2', fullName: 'Zo\u00eb \u{1F600}', id_device: 'dev-002', ShowActive: '1' },
        ]);
        assert.deepEqual(await call('http://b.example', 'Y').then((r) => r.value), [
          { id_student: '10', fullName: 'Plain', ShowActive: 'Y' },
          { id_student: '11', fullName: '', id_device: '', ShowActive: 'Y' },
        ]);
        assert.deepEqual((await call('http://A.example', '1')).value, []);
      });

      test(`AuthCode over ${client.name} is recorded in this database`, async () => {
        const code = `code-${client.name}`;
        const before = Date.now();
        const { res } = await client.call(server.url, op('AuthCode'), { code, phone: '+15551234567' });
        assert.equal(res.status, 200);
        const rows = await db.sql(`select code, phone, created_at from auth_codes where code = '${code}'`);
        assert.equal(rows.length, 1);
        assert.equal(rows[0]!['phone'], '+15551234567');
        const at = new Date(rows[0]!['created_at'] as string | Date).getTime();
        assert.ok(at >= before - 1000 && at <= Date.now() + 1000);
      });
    }
  });
}
