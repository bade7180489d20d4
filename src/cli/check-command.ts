/**
 * `sis check`: what `sis serve` would meet at start, found before a deploy (a pipeline step, an
 * init container), changing nothing. One line per check, `ok` or what is wrong; exit 0 only when
 * every check passes.
 */
import { X509Certificate } from 'node:crypto';
import { ConfigError, loadConfig } from '../config/config.js';
import type { Config } from '../config/config.js';
import { probeRedis } from '../observe/probes.js';
import { buildGateways } from '../outbox/gateway-list.js';
import { redactDatabaseUrl } from '../store/open/database-url.js';
import { inspectDatabase } from '../store/open/open-store.js';
import { LATEST_SCHEMA_VERSION } from '../store/schema/migration-list.js';
import { defineCommand } from './command.js';
import type { Command } from './command.js';
import { errorMessage, processOutput } from './output.js';
import type { CommandOutput } from './output.js';

const USAGE = `Usage: sis check

Checks, without changing anything, what \`sis serve\` needs, with the same settings (environment
and SIS_CONFIG_FILE), one line each:

  configuration  every setting is valid (TLS files included)
  database       it opens and answers, reading only (SQLite: a query_only connection; PostgreSQL:
                 read-only transactions); the service's user may write the SQLite file and its
                 directory; its schema is current, or the migrations that the start or
                 \`sis migrate\` will apply are listed; a schema newer than this program fails
  tls            the certificate and key load, match and the certificate is valid today
  redis          SIS_REDIS_URL answers PING (skipped when unset)
  sms gateway    SIS_SMS_WEBHOOK_URL answers a HEAD request below 500; no message is sent
                 (skipped when unset)

Run it as the service's user, where the service runs (an init container, a deploy step).

Exit status: 0 every check passed, 1 a check failed, 2 usage error.
`;

/** One check's outcome: a pass (ok or skipped) with details, or what is wrong. */
type Outcome = { readonly ok: true; readonly text: string } | { readonly ok: false; readonly text: string };

const ok = (details?: string): Outcome => ({ ok: true, text: details === undefined ? 'ok' : `ok (${details})` });
const skipped = (why: string): Outcome => ({ ok: true, text: `skipped (${why})` });
// The same words the service would use at start (the start-up errors), without "cannot start".
const failed = (error: unknown): Outcome => ({ ok: false, text: `FAILED: ${errorMessage(error)}` });

const PROBE_TIMEOUT_MS = 5000;

export function createCheckCommand(output: CommandOutput = processOutput): Command {
  return defineCommand(
    {
      name: 'check',
      summary: 'check the configuration, database, TLS, Redis and SMS gateway before a deploy',
      usage: USAGE,
      async run({ env }) {
        let passed = true;
        const line = (name: string, outcome: Outcome): void => {
          passed &&= outcome.ok;
          output.stdout.write(`${name}: ${outcome.text}\n`);
        };
        let config: Config;
        try {
          config = loadConfig(env);
        } catch (error) {
          if (!(error instanceof ConfigError)) throw error;
          for (const problem of error.problems) line('configuration', { ok: false, text: `FAILED: ${problem}` });
          for (const name of ['database', 'tls', 'redis', 'sms gateway'])
            line(name, skipped('the configuration is invalid'));
          return 1;
        }
        line('configuration', ok());
        line('database', await checkDatabase(config));
        line('tls', checkTls(config));
        line(
          'redis',
          config.redisUrl === null
            ? skipped('SIS_REDIS_URL is not set')
            : await attempt(() => probeRedis(config.redisUrl!, PROBE_TIMEOUT_MS)),
        );
        // One line per gateway of SIS_SMS_GATEWAY, each asked without a message (credentials, reachable).
        const gateways = buildGateways(config);
        if (gateways.length === 0)
          line('sms gateway', skipped('no gateway configured (SIS_SMS_GATEWAY and its settings)'));
        for (const gateway of gateways) {
          const name =
            gateways.length === 1 && gateway.name === 'webhook' ? 'sms gateway' : `sms gateway ${gateway.name}`;
          line(name, await attempt(() => gateway.probe(Math.min(config.smsGateways.timeoutMs, PROBE_TIMEOUT_MS))));
          await gateway.close?.();
        }
        return passed ? 0 : 1;
      },
    },
    output,
  );
}

export const checkCommand: Command = createCheckCommand();

async function attempt(probe: () => Promise<string>): Promise<Outcome> {
  try {
    return ok(await probe());
  } catch (error) {
    return failed(error);
  }
}

async function checkDatabase(config: Config): Promise<Outcome> {
  const shown = redactDatabaseUrl(config.databaseUrl);
  try {
    const found = await inspectDatabase(config.databaseUrl);
    switch (found.state) {
      case 'memory':
        return ok(`${shown}: in memory, made at each start`);
      case 'missing':
        return ok(`${found.path} does not exist yet: the service creates and migrates it at start`);
      case 'empty':
        return ok(`${found.where}: no tables yet, created at start or by \`sis migrate\``);
      case 'current':
        return ok(`${found.where}: schema version ${found.version}, up to date`);
      case 'pending':
        return ok(
          `${found.where}: schema version ${found.version}; ${found.pending.length === 1 ? 'migration' : 'migrations'} ${found.pending.join(', ')} ` +
            `to reach ${LATEST_SCHEMA_VERSION} applied at start or by \`sis migrate\``,
        );
    }
  } catch (error) {
    return failed(error);
  }
}

function checkTls(config: Config): Outcome {
  if (config.tls === null) return skipped('SIS_TLS_CERT is not set');
  // The configuration has read both files, parsed them and matched the key; here, the dates.
  const cert = new X509Certificate(config.tls.cert);
  const now = Date.now();
  const from = new Date(cert.validFrom);
  const to = new Date(cert.validTo);
  const subject = cert.subject.replace(/\n/g, ', ');
  if (now < from.getTime())
    return {
      ok: false,
      text: `FAILED: the certificate (${subject}) is not valid before ${from.toISOString()}: check the clock, or use a current certificate`,
    };
  if (now > to.getTime())
    return { ok: false, text: `FAILED: the certificate (${subject}) expired on ${to.toISOString()}: renew it` };
  const days = Math.floor((to.getTime() - now) / 86_400_000);
  return ok(`${subject}, valid until ${to.toISOString()} (${days} days)`);
}
