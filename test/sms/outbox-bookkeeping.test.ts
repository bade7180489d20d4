/**
 * Exactly once through a database that refuses the outbox's own bookkeeping (issue 44): the gateway
 * accepts a message, and the write that marks it delivered is refused, for real: PostgreSQL
 * answering 25006 as a demoted primary does (a private cluster made read-only for every session,
 * read-only-postgres.ts), SQLite's disk full (a small tmpfs filled). The lease runs out meanwhile.
 * The message is sent once, marked delivered once writes land again; codes answered with the fault
 * meanwhile are neither stored nor sent; with two instances, the other never takes the message.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { AuthCode } from '../../src/operations/auth-code.js';
import { openStore } from '../../src/store/open/open-store.js';
import type { SqlStore } from '../../src/store/sql/sql-store.js';
import { bindingClients } from '../helpers/binding-clients.js';
import { logCollector } from '../helpers/log-collector.js';
import { PRIVATE_POSTGRES_SKIP, startPrivatePostgres } from '../helpers/private-postgres.js';
import type { PrivatePostgres } from '../helpers/private-postgres.js';
import { refuseWrites } from '../helpers/read-only-postgres.js';
import { eventually, startSmsGateway } from '../helpers/sms-gateway.js';
import type { SmsGateway } from '../helpers/sms-gateway.js';
import { sqliteRows } from '../helpers/sqlite-file.js';
import { startTestServer } from '../helpers/test-server.js';
import type { TestServer } from '../helpers/test-server.js';
import { fillDisk, mountTmpfs } from '../helpers/tmpfs.js';

const soap = bindingClients.find((c) => c.name === 'soap11')!;
const SECRET = 'bookkeeping-secret-of-at-least-32-bytes';
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A database whose writes can be refused and allowed again, and its rows read meanwhile. */
interface Refusing {
  readonly url: string;
  refuse(): Promise<void>;
  allow(): Promise<void>;
  /** The codes stored by AuthCode. */
  storedCodes(): Promise<string[]>;
}

let cluster: PrivatePostgres | null = null;
let schemas = 0;
const tmpfs = mountTmpfs();

const targets: { name: string; skip: string | false; make(): Promise<Refusing> }[] = [
  {
    name: 'PostgreSQL (read-only: 25006)',
    skip: PRIVATE_POSTGRES_SKIP,
    async make() {
      const schema = `bookkeeping_${++schemas}`;
      const url = `${cluster!.url('sis')}?schema=${schema}`;
      return {
        url,
        refuse: () => refuseWrites(cluster!.url('sis'), true),
        allow: () => refuseWrites(cluster!.url('sis'), false),
        async storedCodes() {
          const client = new pg.Client({ connectionString: cluster!.url('sis') });
          await client.connect();
          try {
            const { rows } = await client.query<{ code: string }>(`select code from ${schema}.auth_codes`);
            return rows.map((r) => r.code);
          } finally {
            await client.end();
          }
        },
      };
    },
  },
  {
    name: 'SQLite (disk full)',
    skip: tmpfs.skip,
    async make() {
      const file = join(tmpfs.dir, `sis-${++schemas}.db`);
      const filler = join(tmpfs.dir, 'filler');
      return {
        url: `sqlite:${file}`,
        refuse: async () => fillDisk(filler),
        allow: async () => rmSync(filler, { force: true }),
        storedCodes: async () => sqliteRows<{ code: string }>(file, 'select code from auth_codes').map((r) => r.code),
      };
    },
  },
];

before(async () => {
  if (PRIVATE_POSTGRES_SKIP === false) cluster = await startPrivatePostgres('sis');
});
after(() => cluster?.remove());

/** A service on `db` whose outbox delivers through `gateway`, with a short lease. */
async function serve(
  db: Refusing,
  gateway: SmsGateway,
  leaseMs: number,
  logDestination?: NodeJS.WritableStream,
): Promise<{ server: TestServer; store: SqlStore }> {
  const store = await openStore(db.url, { poolSize: 4 });
  const server = await startTestServer({
    store,
    ...(logDestination === undefined ? {} : { logDestination }),
    env: {
      ...(logDestination === undefined ? {} : { LOG_LEVEL: 'info' }),
      SIS_SMS_WEBHOOK_URL: gateway.url,
      SIS_SMS_WEBHOOK_SECRET: SECRET,
      // Below the lease, as the settings require; the gateway's answer waits for the refusal meanwhile.
      SIS_SMS_WEBHOOK_TIMEOUT_MS: String(leaseMs - 500),
      SIS_OUTBOX_LEASE_MS: String(leaseMs),
      SIS_OUTBOX_POLL_MS: '50',
      SIS_OUTBOX_BACKOFF_MS: '50',
    },
  });
  return { server, store };
}

async function authCode(server: TestServer, code: string, phone: string): Promise<number> {
  return (await soap.call(server.url, AuthCode, { code, phone })).res.status;
}

/** Lines at error or above naming outcomes left unwritten at a stop. */
function stoppingLines(lines: readonly Record<string, unknown>[]): number {
  return lines.filter((l) => Number(l['level']) >= 50 && String(l['msg']).startsWith('outbox: stopping with')).length;
}

/** How many times the gateway accepted each code. */
function sentCodes(gateway: SmsGateway): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of gateway.received) if (r.status < 300) counts[r.code] = (counts[r.code] ?? 0) + 1;
  return counts;
}

/** Resolves once the gateway has the first message and the database refuses writes. */
function refusingAtFirstMessage(db: Refusing): { hook: (n: number) => Promise<void>; refused: Promise<void> } {
  let done!: () => void;
  const refused = new Promise<void>((resolve) => (done = resolve));
  return {
    refused,
    async hook(n) {
      if (n !== 0) return;
      await db.refuse();
      done();
    },
  };
}

describe('the outbox when its bookkeeping write is refused', () => {
  for (const target of targets) {
    test(
      `${target.name}: accepted by the gateway, then the lease runs out while "delivered" cannot be written: sent once, delivered once writes land`,
      { skip: target.skip, timeout: 120_000 },
      async () => {
        const db = await target.make();
        const { hook, refused } = refusingAtFirstMessage(db);
        const gateway = await startSmsGateway(SECRET, () => 200, 0, hook);
        const leaseMs = 3000;
        const { server, store } = await serve(db, gateway, leaseMs).catch(async (error: unknown) => {
          await gateway.close();
          throw error;
        });
        try {
          assert.equal(await authCode(server, 'ONCE-1', '+15550100601'), 200);
          await refused;
          // The database refuses writes: AuthCode answers the fault, and stores and sends nothing.
          for (const [i, code] of ['REFUSED-1', 'REFUSED-2'].entries())
            assert.equal(await authCode(server, code, `+1555010061${i}`), 500);
          // The lease runs out while the outcome waits to be written.
          await sleep(1.7 * leaseMs);
          assert.deepEqual(sentCodes(gateway), { 'ONCE-1': 1 });

          await db.allow();
          const [row] = await eventually(async () => {
            const rows = await store.listOutbox({});
            return rows.length === 1 && rows[0]!.state === 'delivered' ? rows : undefined;
          });
          assert.equal(row!.code, '', 'delivered: the code is erased');
          assert.equal(await authCode(server, 'AFTER-1', '+15550100620'), 200);
          await gateway.delivered(2);
          // Past another lease: a second delivery of either, were there one, has had the time to come.
          await sleep(leaseMs + 500);
          assert.deepEqual(sentCodes(gateway), { 'ONCE-1': 1, 'AFTER-1': 1 });
          assert.deepEqual(gateway.received.length, 2, 'no other attempt');
          assert.deepEqual((await db.storedCodes()).sort(), ['AFTER-1', 'ONCE-1']);
          const rows = await store.listOutbox({});
          assert.deepEqual(
            rows.map((m) => m.state),
            ['delivered', 'delivered'],
          );
        } finally {
          await db.allow();
          await server.close();
          await store.close();
          await gateway.close();
        }
      },
    );
  }

  for (const target of targets) {
    test(
      `${target.name}: the process stops before the outcome lands: one error line names the message, which the next process sends again after the lease (the limit)`,
      { skip: target.skip, timeout: 120_000 },
      async () => {
        const db = await target.make();
        const { hook, refused } = refusingAtFirstMessage(db);
        const gateway = await startSmsGateway(SECRET, () => 200, 0, hook);
        const leaseMs = 3000;
        const logs = logCollector();
        const first = await serve(db, gateway, leaseMs, logs.stream);
        let second: { server: TestServer; store: SqlStore } | null = null;
        try {
          assert.equal(await authCode(first.server, 'LIMIT-1', '+15550100801'), 200);
          await refused;
          await sleep(500); // the outcome's write is refused, and the outcome kept
          await first.server.close();
          await first.store.close();
          const ids = await eventually(() => {
            const line = logs.lines.find((l) => String(l['msg']).startsWith('outbox: stopping with attempt outcomes'));
            return line === undefined ? undefined : (line['outboxIds'] as number[]);
          });
          assert.equal(ids.length, 1);
          assert.equal(stoppingLines(logs.lines), 1, 'one error line');
          await db.allow();
          second = await serve(db, gateway, leaseMs);
          await gateway.delivered(2, 30_000);
          assert.deepEqual(sentCodes(gateway), { 'LIMIT-1': 2 }, 'at least once: never lost');
          assert.deepEqual(
            gateway.received.map((r) => r.messageId),
            [String(ids[0]), String(ids[0])],
            'the repeat carries the same X-Message-Id',
          );
        } finally {
          await db.allow();
          if (second !== null) {
            await second.server.close();
            await second.store.close();
          }
          await gateway.close();
        }
      },
    );
  }

  test(
    'PostgreSQL, two instances: while the outcome waits to be written, the lease keeps the other instance off the message',
    { skip: PRIVATE_POSTGRES_SKIP, timeout: 120_000 },
    async () => {
      const db = await targets[0]!.make();
      const { hook, refused } = refusingAtFirstMessage(db);
      const gateway = await startSmsGateway(SECRET, () => 200, 0, hook);
      const leaseMs = 6000;
      const a = await serve(db, gateway, leaseMs);
      const b = await serve(db, gateway, leaseMs);
      try {
        assert.equal(await authCode(a.server, 'SHARED-1', '+15550100701'), 200);
        await refused;
        const since = Date.now();
        await sleep(1000);
        await db.allow();
        await eventually(async () => ((await a.store.listOutbox({}))[0]?.state === 'delivered' ? true : undefined));
        assert.ok(Date.now() - since < leaseMs, 'written again well within the lease');
        // Until the lease would have run out, and a moment more: nobody sent it again.
        await sleep(leaseMs + 500);
        assert.deepEqual(sentCodes(gateway), { 'SHARED-1': 1 });
        assert.equal(gateway.received.length, 1);
      } finally {
        await db.allow();
        for (const { server, store } of [a, b]) {
          await server.close();
          await store.close();
        }
        await gateway.close();
      }
    },
  );
});
