/**
 * Start-up failures (see startup-failures.test.ts) from the address to listen on: a port in use
 * (with one worker or several), an address that is not this machine's, a privileged port for the
 * service user (nobody).
 */
import { chownSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo, Server } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runToExit } from '../helpers/serve-process.js';
import { AS_ROOT, assertOneLine, newDir, NOBODY, NOBODY_SKIP } from '../helpers/startup-failure.js';

function occupy(host: string): Promise<Server> {
  const server = createServer();
  return new Promise((resolve) => server.listen(0, host, () => resolve(server)));
}

describe('start-up failures: the address', () => {
  it('a port in use: the address and the port (69)', async () => {
    const taken = await occupy('127.0.0.1');
    const port = (taken.address() as AddressInfo).port;
    try {
      const exit = await runToExit(`sqlite:${join(newDir(), 'sis.db')}`, { PORT: String(port) });
      assertOneLine(
        exit,
        69,
        'ERR_ADDRESS',
        new RegExp(
          `^sis serve: cannot start: the address 127\\.0\\.0\\.1:${port} is already in use \\(another process listens on port ${port}\\): stop that process, or set PORT`,
        ),
      );
    } finally {
      taken.close();
    }
  });

  it('with workers, the failure of every worker is one line from the primary (69)', async () => {
    const taken = await occupy('127.0.0.1');
    const port = (taken.address() as AddressInfo).port;
    try {
      const exit = await runToExit(
        `sqlite:${join(newDir(), 'sis.db')}`,
        { PORT: String(port) },
        { args: ['serve', '--workers', '2'] },
      );
      assertOneLine(
        exit,
        69,
        'ERR_ADDRESS',
        new RegExp(`^sis serve: cannot start: the address 127\\.0\\.0\\.1:${port} is already in use`),
      );
    } finally {
      taken.close();
    }
  });

  it("an address that is not this machine's (69)", async () => {
    const exit = await runToExit(`sqlite:${join(newDir(), 'sis.db')}`, { HOST: '192.0.2.1', PORT: '8080' });
    assertOneLine(
      exit,
      69,
      'ERR_ADDRESS',
      /^sis serve: cannot start: HOST=192\.0\.2\.1 is not an address of this machine, so 192\.0\.2\.1:8080 cannot be listened on: set HOST/,
    );
  });

  const unprivilegedFrom = (): number => {
    try {
      return Number(readFileSync('/proc/sys/net/ipv4/ip_unprivileged_port_start', 'utf8'));
    } catch {
      return 1024;
    }
  };
  const portSkip = !AS_ROOT
    ? NOBODY_SKIP
    : unprivilegedFrom() <= 80
      ? 'this machine lets any user listen on port 80'
      : false;
  it('a privileged port for an unprivileged user (69)', { skip: portSkip }, async () => {
    const dir = newDir();
    chownSync(dir, NOBODY.uid, NOBODY.gid);
    const exit = await runToExit(`sqlite:${join(dir, 'sis.db')}`, { PORT: '80' }, { user: NOBODY });
    assertOneLine(
      exit,
      69,
      'ERR_ADDRESS',
      /^sis serve: cannot start: user nobody \(uid 65534\) may not listen on 127\.0\.0\.1:80 \(ports below 1024 need root or the CAP_NET_BIND_SERVICE capability\)/,
    );
  });
});
