import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { operations } from '../src/operations/index.js';
import type { Operation } from '../src/operations/index.js';
import { bindingClients } from './helpers/binding-clients.js';
import { startTestServer } from './helpers/test-server.js';
import type { TestServer } from './helpers/test-server.js';

const op = (name: string): Operation => operations.find((o) => o.name === name)!;

const dataset = {
  students: [
    { id_student: '1', fullName: "O'Brien & <Sons>", id_device: 'dev-001', ShowActive: '1', school_base_url: 'http://a.example' },
    { id_student: '3', fullName: 'علي', id_device: 'dev-003', ShowActive: '0', school_base_url: 'http://a.example' },
    { id_student: '2', fullName: 'Zoë 😀', id_device: 'dev-002', ShowActive: '1', school_base_url: 'http://a.example' },
    { id_student: '10', fullName: 'Plain', id_device: null, ShowActive: 'Y', school_base_url: 'http://b.example' },
    { id_student: '11', fullName: '', id_device: '', ShowActive: 'Y', school_base_url: 'http://b.example' },
  ],
  devices: [
    { id: '1', token: 'tok-AAA-111' },
    { id: 'esc', token: 'a<b & c>"d" \'e\' éè علي 😀' },
    { id: 'empty', token: '' },
    { id: 'nulltok', token: null },
  ],
};

/** Every operation over every binding: one loop, the same expectations for all four. */
for (const client of bindingClients) {
  describe(`operations over ${client.name}`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer({ dataset });
    });
    after(() => server.close());

    it('GetStudentSchool lists the matching students in import order, fields as stored', async () => {
      const { res, value } = await client.call(server.url, op('GetStudentSchool'), {
        school_base_url: 'http://a.example',
        show_active: '1',
      });
      assert.equal(res.status, 200);
      assert.deepEqual(value, [
        { id_student: '1', fullName: "O'Brien & <Sons>", id_device: 'dev-001', ShowActive: '1' },
        { id_student: '2', fullName: 'Zoë 😀', id_device: 'dev-002', ShowActive: '1' },
      ]);
    });

    it('GetStudentSchool leaves null fields out and keeps empty ones', async () => {
      const { value } = await client.call(server.url, op('GetStudentSchool'), {
        school_base_url: 'http://b.example',
        show_active: 'Y',
      });
      assert.deepEqual(value, [
        { id_student: '10', fullName: 'Plain', ShowActive: 'Y' },
        { id_student: '11', fullName: '', id_device: '', ShowActive: 'Y' },
      ]);
    });

    it('GetStudentSchool answers an empty list for an unknown school or flag', async () => {
      for (const args of [
        { school_base_url: 'http://nowhere.example', show_active: '1' },
        { school_base_url: 'http://a.example', show_active: '9' },
      ]) {
        const { res, value } = await client.call(server.url, op('GetStudentSchool'), args);
        assert.equal(res.status, 200);
        assert.deepEqual(value, []);
      }
    });

    it('GetTokenDevice answers the stored token, with special characters intact', async () => {
      assert.equal((await client.call(server.url, op('GetTokenDevice'), { id: '1' })).value, 'tok-AAA-111');
      assert.equal((await client.call(server.url, op('GetTokenDevice'), { id: 'esc' })).value, 'a<b & c>"d" \'e\' éè علي 😀');
      assert.equal((await client.call(server.url, op('GetTokenDevice'), { id: 'empty' })).value, '');
    });

    it('GetTokenDevice answers null for an unknown id or a null token', async () => {
      assert.equal((await client.call(server.url, op('GetTokenDevice'), { id: 'nope' })).value, null);
      assert.equal((await client.call(server.url, op('GetTokenDevice'), { id: 'nulltok' })).value, null);
    });

    it('AuthCode records the pair with its time and answers void', async () => {
      const before = Date.now();
      const { res } = await client.call(server.url, op('AuthCode'), { code: `c-${client.name}`, phone: '+15551234567' });
      assert.equal(res.status, 200);
      if (client.name.startsWith('http')) {
        assert.equal(res.body.length, 0);
        assert.equal(res.headers.get('content-type'), undefined, 'void GET/POST answers carry no Content-Type');
      }
      const rows = readAuthCodes(server);
      const row = rows.find((r) => r.code === `c-${client.name}`);
      assert.ok(row, 'the code was recorded');
      assert.equal(row.phone, '+15551234567');
      assert.ok(new Date(row.created_at).getTime() >= before - 1000);
    });

    for (const name of ['GetStudentsMarks', 'GetServerKeyAndSender']) {
      it(`${name} answers the documented void result`, async () => {
        const { res } = await client.call(server.url, op(name), { StudnetID: '1', SubjectID: 'math' });
        assert.equal(res.status, 200);
        if (client.name.startsWith('http')) assert.equal(res.body.length, 0);
        else assert.match(res.body.toString(), new RegExp(`<${name}Response xmlns="http://tempuri.org/" />`));
      });
    }
  });
}

function readAuthCodes(server: TestServer): { code: string; phone: string; created_at: string }[] {
  const dbFile = server.databaseFile;
  const db = new Database(dbFile, { readonly: true });
  try {
    return db.prepare('SELECT code, phone, created_at FROM auth_codes').all() as { code: string; phone: string; created_at: string }[];
  } finally {
    db.close();
  }
}
