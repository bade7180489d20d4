/**
 * A PostgreSQL server that refuses every write as a demoted primary does (SQLSTATE 25006, "cannot
 * execute UPDATE in a read-only transaction"), then takes them again: default_transaction_read_only
 * set for the whole server and the configuration reloaded, so the sessions already open (a pool's
 * connections) refuse too. Only on a private cluster (private-postgres.ts): it changes the server.
 */
import pg from 'pg';
import { eventually } from './eventually.js';

/** `refuse`: every session's transactions are read-only from its next command on; false: writable again. */
export async function refuseWrites(url: string, refuse: boolean): Promise<void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    // This session keeps writing whatever the server's setting (a session's own value wins).
    await admin.query('set default_transaction_read_only = off');
    await admin.query(
      refuse
        ? 'alter system set default_transaction_read_only = on'
        : 'alter system reset default_transaction_read_only',
    );
    await admin.query('select pg_reload_conf()');
  } finally {
    await admin.end();
  }
  // A new session shows the postmaster has reloaded; it signals the open sessions in the same step,
  // and each applies the file before its next command.
  await eventually(async () => {
    const probe = new pg.Client({ connectionString: url });
    await probe.connect();
    try {
      const { rows } = await probe.query<{ default_transaction_read_only: string }>(
        'show default_transaction_read_only',
      );
      if (rows[0]?.default_transaction_read_only !== (refuse ? 'on' : 'off')) throw new Error('not reloaded yet');
    } finally {
      await probe.end();
    }
  });
  await new Promise((resolve) => setTimeout(resolve, 100));
}
