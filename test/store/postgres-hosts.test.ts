/**
 * The store's PostgreSQL connections (postgres-hosts.ts, issue 44) against the shared test server:
 * hosts tried in the list's order, a new connection judged against target_session_attrs before
 * use, and every connection to a host retired once one finds its server read-only (idle ones
 * closed at once, busy ones on release). The switchover itself: test/deploy/switchover.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import type { PoolClient } from 'pg';
import { parseDatabaseUrl } from '../../src/store/open/database-url.js';
import { HostPool, ServerSessionError } from '../../src/store/postgres/postgres-hosts.js';
import type { SessionAttrs } from '../../src/store/postgres/postgres-hosts.js';
import { runSis } from '../helpers/serve-process.js';
import { closedPort } from '../helpers/sms-gateway.js';
import { adminClient, cleanupTargets, POSTGRES_SKIP, postgresUrl } from '../helpers/store-targets.js';

after(cleanupTargets);

/** A role whose sessions are read-only from their start, as on a server made read-only. */
const READ_ONLY_ROLE = `sis_ro_${process.pid}`;

function hostPool(url: string, sessionAttrs: SessionAttrs | null = null, errors: Error[] = []): HostPool {
  const target = parseDatabaseUrl(url);
  if (target.dialect !== 'postgres') throw new Error('a PostgreSQL URL');
  return new HostPool(
    pg,
    target.hosts,
    {
      sessionAttrs: sessionAttrs ?? target.sessionAttrs ?? 'read-write',
      loadBalance: target.loadBalance,
      onBackgroundError: (e) => errors.push(e),
    },
    { max: 4, connectionTimeoutMillis: 5000 },
  );
}

const pid = (c: PoolClient): number => (c as unknown as { processID: number }).processID;

/** `url` with `user` and the host list `hosts` (host:port each). */
function withHosts(hosts: readonly string[], user = 'postgres', query = ''): string {
  const u = new URL(postgresUrl);
  return `postgres://${user}@${hosts.join(',')}${u.pathname}${query}`;
}

describe('PostgreSQL host lists and session checks', { skip: POSTGRES_SKIP ?? undefined }, () => {
  let here: string;
  before(async () => {
    const u = new URL(postgresUrl);
    here = `${u.hostname}:${u.port || 5432}`;
    const admin = await adminClient();
    await admin.query(`create role ${READ_ONLY_ROLE} login`);
    await admin.query(`alter role ${READ_ONLY_ROLE} set default_transaction_read_only = on`);
  });
  after(async () => {
    const admin = await adminClient();
    await admin.query(`drop role if exists ${READ_ONLY_ROLE}`);
  });

  it('hosts tried in order: one refusing connections is passed over', async () => {
    const dead = `127.0.0.1:${await closedPort()}`;
    const pool = hostPool(withHosts([dead, here], 'postgres', '?target_session_attrs=read-write'));
    try {
      const { rows } = await pool.query<[number]>({ text: 'select 1', rowMode: 'array' });
      assert.deepEqual(rows, [[1]]);
    } finally {
      await pool.end();
    }
  });

  it('a read-only server is not pooled where a writable one is asked for; any takes it', async () => {
    const url = withHosts([here], READ_ONLY_ROLE);
    const writable = hostPool(url, 'read-write');
    const primary = hostPool(url, 'primary');
    const any = hostPool(url, 'any');
    const readOnly = hostPool(url, 'read-only');
    try {
      await assert.rejects(writable.connect(), (e: unknown) => {
        assert.ok(e instanceof ServerSessionError);
        assert.equal(e.code, '25006');
        assert.match(e.message, new RegExp(`server at ${here.replace(/\./g, '\\.')} is read-only`));
        return true;
      });
      // Not in recovery: a primary, though its sessions are read-only.
      (await primary.connect()).release();
      (await any.connect()).release();
      (await readOnly.connect()).release();
      await assert.rejects(hostPool(url, 'standby').connect(), { code: 'ERR_DB_SESSION' });
    } finally {
      await Promise.all([writable.end(), primary.end(), any.end(), readOnly.end()]);
    }
  });

  it('a connection that finds its server read-only retires every connection to it', async () => {
    const errors: Error[] = [];
    const pool = hostPool(withHosts([here]), 'read-write', errors);
    try {
      const busy = await pool.connect();
      const idle = await pool.connect();
      const idlePid = pid(idle);
      idle.release();
      // As a demoted server's connections would: the server says its sessions are read-only now.
      await busy.query('set default_transaction_read_only = on');
      const admin = await adminClient();
      const alive = async (p: number): Promise<boolean> =>
        (await admin.query('select 1 from pg_stat_activity where pid = $1', [p])).rowCount === 1;
      for (let i = 0; i < 100 && (await alive(idlePid)); i++) await new Promise((r) => setTimeout(r, 20));
      assert.equal(await alive(idlePid), false, 'the idle connection is closed at once');
      const busyPid = pid(busy);
      busy.release();
      const next = await pool.connect();
      assert.notEqual(pid(next), busyPid, 'the busy one is not handed out again');
      assert.notEqual(pid(next), idlePid);
      // A 25006 answer retires the same way.
      await next.query('begin read only');
      await assert.rejects(next.query('create temporary table t (x int)'), { code: '25006' });
      await next.query('rollback');
      const nextPid = pid(next);
      next.release();
      const last = await pool.connect();
      assert.notEqual(pid(last), nextPid);
      last.release();
      assert.deepEqual(errors, [], 'retired connections closing are no background errors');
    } finally {
      await pool.end();
    }
  });

  it('`sis check` reads a host list (a standby is good enough for it) and redacts its password', async () => {
    const dead = `127.0.0.1:${await closedPort()}`;
    const url = withHosts([dead, here], 'postgres:secret-word', '?target_session_attrs=read-write');
    const result = await runSis(['check'], url);
    assert.doesNotMatch(result.stdout + result.stderr, /secret-word/);
    assert.match(result.stdout, new RegExp(`database: .*${dead.replace(/\./g, '\\.')},${here.replace(/\./g, '\\.')}`));
  });
});
