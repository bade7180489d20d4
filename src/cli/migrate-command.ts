/** `sis migrate`: brings the database to this program's schema version, as the service does on start. */
import { LATEST_SCHEMA_VERSION } from '../store/schema/migration-list.js';
import { withCommandStore } from './cli-store.js';
import { defineCommand } from './command.js';
import type { Command } from './command.js';
import { processOutput } from './output.js';
import type { CommandOutput } from './output.js';

const USAGE = `Usage: sis migrate

Creates the database named by SIS_DATABASE_URL if needed and applies the migrations it lacks,
in one transaction, recording each in sis_migrations. Safe to run while the service runs and
from several places at once (PostgreSQL: an advisory lock; SQLite: the write lock): the others
wait, then find nothing to do. The service applies them too when it starts; this command is for
deployments that migrate first. A database newer than this program is refused.

Exit status: 0 up to date, 1 database error, 2 usage error.
`;

export function createMigrateCommand(output: CommandOutput = processOutput): Command {
  return defineCommand(
    {
      name: 'migrate',
      summary: 'create the database or bring its schema up to date',
      usage: USAGE,
      async run({ env }) {
        // Migrations run in one transaction, recorded in it: a second run applies what the first did not.
        return withCommandStore('migrate', output, env, { migrations: 'apply', rerun: true }, async (store, db) => {
          const applied = store.migrationsApplied;
          output.stdout.write(
            applied.length === 0
              ? `${db.shownUrl} is up to date (schema version ${LATEST_SCHEMA_VERSION})\n`
              : `${db.shownUrl}: applied ${applied.length === 1 ? 'migration' : 'migrations'} ${applied.join(', ')} (schema version ${LATEST_SCHEMA_VERSION})\n`,
          );
          return 0;
        });
      },
    },
    output,
  );
}

export const migrateCommand: Command = createMigrateCommand();
