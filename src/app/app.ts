import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Dispatcher } from '../bindings/dispatch.js';
import { MetadataEndpoint } from '../bindings/metadata-endpoint.js';
import type { Config } from '../config/config.js';
import { createHttpServer } from '../http/server.js';
import type { Logger } from '../http/logger.js';
import { services } from '../operations/index.js';
import { DEMO_DATASET } from '../store/demo-data.js';
import { openStore } from '../store/open-store.js';
import type { Store } from '../store/store.js';

/** A running service: its server, its store, and how to stop both. */
export interface App {
  readonly server: Server;
  readonly store: Store;
  /** The address it listens on (`http://127.0.0.1:PORT`). */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Wires the pieces in the order a request meets them: store, operations' context, dispatcher,
 * HTTP server. The first start on an empty database loads the demo data (unless disabled).
 */
export async function startApp(config: Config, log: Logger, options: { store?: Store } = {}): Promise<App> {
  const store = options.store ?? (await openStore(config.databaseUrl));
  if (config.demoData && (await store.isEmpty())) {
    const report = await store.importDataset(DEMO_DATASET);
    log.info(report, 'empty database: demo data loaded');
  }
  const dispatcher = new Dispatcher(services, config, { store, now: () => new Date() }, new MetadataEndpoint(config.namespace));
  const server = createHttpServer(config, dispatcher, log);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host === '[::]' ? '127.0.0.1' : host}:${addr.port}`;
  let closing: Promise<void> | undefined;
  return {
    server,
    store,
    url,
    close() {
      closing ??= (async () => {
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
        });
        await store.close();
      })();
      return closing;
    },
  };
}
