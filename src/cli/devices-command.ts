/** `sis devices get|set|remove`: one device at a time, for support work without a dataset file. */
import { DatasetError } from '../store/import/dataset-check.js';
import { withCommandStore } from './cli-store.js';
import { defineCommand } from './command.js';
import type { Command } from './command.js';
import { processOutput } from './output.js';
import type { CommandOutput } from './output.js';

const USAGE = `Usage: sis devices get ID
       sis devices set ID TOKEN
       sis devices set ID --null
       sis devices remove ID

get     prints the token GetTokenDevice answers for ID as a JSON string (exact, white space
        and all), or null when the device has a null token; exit status 1 when there is no
        such device
set     stores TOKEN (or, with --null, a null token) for ID, creating the device if needed
remove  deletes the device; exit status 1 when there was none

The database is the one named by SIS_DATABASE_URL; set and remove create and migrate it if
needed, as the service does. Values must be text XML 1.0 allows.
Exit status: 0 done, 1 no such device or database error, 2 usage error.
`;

export function createDevicesCommand(output: CommandOutput = processOutput): Command {
  const out = (line: string): unknown => output.stdout.write(`${line}\n`);
  return defineCommand(
    {
      name: 'devices',
      summary: 'show, set or remove one device token',
      usage: USAGE,
      options: [{ name: 'null' }],
      positionals: true,
      async run({ args: parsed, env, usageError }) {
        const [action, id, token, ...extra] = parsed.positionals;
        const nullToken = parsed.options.has('null');
        if (action === undefined) return usageError('missing the action: get, set or remove');
        if (action !== 'get' && action !== 'set' && action !== 'remove') {
          return usageError(`unknown action ${JSON.stringify(action)}; expected get, set or remove`);
        }
        if (id === undefined) return usageError(`missing the device ID`);
        if (nullToken && action !== 'set') return usageError('--null is for set');
        const expected = action === 'set' && !nullToken ? 1 : 0;
        const given = (token === undefined ? 0 : 1) + extra.length;
        if (given !== expected) {
          if (action === 'set' && !nullToken && given === 0) return usageError('missing the TOKEN (or --null)');
          return usageError(`too many arguments for ${action}`);
        }

        const migrations = action === 'get' ? 'require' : 'apply';
        // set is an upsert and remove a delete: run again, each leaves the same device (or none).
        return withCommandStore('devices', output, env, { migrations, rerun: action !== 'get' }, async (store, db) => {
          if (action === 'get') {
            const device = await store.admin.device(id);
            if (device === null) {
              output.stderr.write(`sis devices: no device ${JSON.stringify(id)} in ${db.shownUrl}\n`);
              return 1;
            }
            out(JSON.stringify(device.token));
            return 0;
          }
          if (action === 'remove') {
            if (!(await store.admin.removeDevice(id))) {
              output.stderr.write(`sis devices: no device ${JSON.stringify(id)} in ${db.shownUrl}\n`);
              return 1;
            }
            out(`removed device ${JSON.stringify(id)}`);
            return 0;
          }
          try {
            const outcome = await store.admin.setDevice(id, nullToken ? null : token!);
            out(`${outcome} device ${JSON.stringify(id)}`);
            return 0;
          } catch (error) {
            if (!(error instanceof DatasetError)) throw error;
            output.stderr.write(`sis devices: ${error.problems.join('; ')}; nothing was changed\n`);
            return 1;
          }
        });
      },
    },
    output,
  );
}

export const devicesCommand: Command = createDevicesCommand();
