/** Listening on HOST:PORT, with a failure that names the address and what to do (AddressError). */
import type { Server } from 'node:net';
import { AddressError, processUser } from '../errors/startup-errors.js';

export function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException): void => reject(addressError(error, host, port));
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      resolve();
    });
  });
}

function addressError(error: NodeJS.ErrnoException, host: string, port: number): unknown {
  const shown = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  const because = { cause: error };
  switch (error.code) {
    case 'EADDRINUSE':
      return new AddressError(
        `the address ${shown} is already in use (another process listens on port ${port}): stop that process, or set PORT (or HOST) to a free address`,
        because,
      );
    case 'EACCES':
      return new AddressError(
        `user ${processUser()} may not listen on ${shown} (ports below 1024 need root or the CAP_NET_BIND_SERVICE capability): ` +
          `set PORT to 1024 or above (behind a proxy), or grant the capability`,
        because,
      );
    case 'EADDRNOTAVAIL':
      return new AddressError(
        `HOST=${host} is not an address of this machine, so ${shown} cannot be listened on: set HOST to one of its addresses, or 0.0.0.0 (all)`,
        because,
      );
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NONAME':
      return new AddressError(
        `HOST=${host} does not resolve to an address here (${error.code}): set HOST to an IP address or a name this machine resolves`,
        because,
      );
    default:
      return new AddressError(`cannot listen on ${shown} (${error.message}): check HOST and PORT`, because);
  }
}
