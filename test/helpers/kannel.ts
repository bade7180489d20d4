/**
 * A real Kannel for the Kannel gateway's test: Debian's bearerbox and smsbox, with kannel-extras'
 * fakesmsc as the carrier, each on free ports with a configuration made from
 * deploy/kannel/kannel.conf's shape. fakesmsc prints every message bearerbox gives it, and
 * Kannel's fake SMSC reports each as delivered to the dlr-url the message carried.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closedPort, eventually } from './sms-gateway.js';

const BEARERBOX = '/usr/sbin/bearerbox';
const SMSBOX = '/usr/sbin/smsbox';
const FAKESMSC = '/usr/lib/kannel/test/fakesmsc';

/** Why the Kannel tests cannot run here, or null. */
export const KANNEL_SKIP: string | null = [BEARERBOX, SMSBOX, FAKESMSC].every((f) => existsSync(f))
  ? null
  : `Kannel not installed (${BEARERBOX}, ${SMSBOX}, ${FAKESMSC}): apt-get install kannel kannel-extras`;

export interface Kannel {
  /** smsbox's sendsms URL. */
  readonly sendsmsUrl: string;
  readonly user: string;
  readonly password: string;
  /** What fakesmsc printed: one `Got message N: <from to type text>` line per message. */
  carrierLines(): string[];
  stop(): Promise<void>;
}

/** Starts bearerbox, smsbox and fakesmsc; `deniedPrefix`: numbers the fake SMSC does not route. */
export async function startKannel(deniedPrefix: string): Promise<Kannel> {
  const dir = mkdtempSync(join(tmpdir(), 'sis-kannel-'));
  const [admin, box, smsc, sendsms] = [await closedPort(), await closedPort(), await closedPort(), await closedPort()];
  const password = 'kannel-test-password-of-32-bytes';
  writeFileSync(
    join(dir, 'kannel.conf'),
    `group = core
admin-port = ${admin}
admin-password = admin-test
smsbox-port = ${box}
box-allow-ip = 127.0.0.1
log-file = ${join(dir, 'bearerbox.log')}
log-level = 0
dlr-storage = internal

group = smsc
smsc = fake
smsc-id = fake
port = ${smsc}
connect-allow-ip = 127.0.0.1
denied-prefix = ${deniedPrefix}

group = smsbox
bearerbox-host = 127.0.0.1
bearerbox-port = ${box}
sendsms-port = ${sendsms}
log-file = ${join(dir, 'smsbox.log')}
log-level = 0

group = sendsms-user
username = sis
password = ${password}
default-sender = School
max-messages = 3
concatenation = true
`,
  );
  const children: ChildProcess[] = [];
  let carrier = '';
  const run = (file: string, args: string[]): ChildProcess => {
    const child = spawn(file, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    return child;
  };
  const stop = async (): Promise<void> => {
    for (const child of children.reverse()) {
      if (child.exitCode !== null) continue;
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await gone;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    run(BEARERBOX, [join(dir, 'kannel.conf')]);
    const log = (): string => {
      try {
        return readFileSync(join(dir, 'bearerbox.log'), 'utf8');
      } catch {
        return '';
      }
    };
    await eventually(() => (log().includes('smsc_fake: start called') ? true : undefined), 30_000, 'bearerbox started');
    run(SMSBOX, [join(dir, 'kannel.conf')]);
    // -m 0: fakesmsc sends nothing of its own; it prints what it is given.
    const fake = run(FAKESMSC, ['-H', '127.0.0.1', '-r', String(smsc), '-m', '0', 'x y text x']);
    const collect = (chunk: Buffer): void => void (carrier += chunk.toString('utf8'));
    fake.stdout?.on('data', collect);
    fake.stderr?.on('data', collect);
    await eventually(
      () => (log().includes('Fakesmsc client connected') ? true : undefined),
      30_000,
      'fakesmsc connected',
    );
    const url = `http://127.0.0.1:${sendsms}/cgi-bin/sendsms`;
    await eventually(
      async () => {
        const res = await fetch(url).catch(() => null);
        await res?.arrayBuffer();
        return res === null ? undefined : true;
      },
      30_000,
      'smsbox answering',
    );
    return {
      sendsmsUrl: url,
      user: 'sis',
      password,
      carrierLines: () => carrier.split('\n').filter((l) => l.includes('Got message')),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
