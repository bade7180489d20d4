/**
 * A streamed import beside the service on one SQLite database: the import reads its file holding
 * no write lock, so the service writes and reads meanwhile. The admin side of the store itself:
 * admin.test.ts.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { jsonDatasetSource } from '../../src/dataset/json-stream.js';
import { openStore } from '../../src/store/open/open-store.js';
import { cleanupTargets, storeTargets } from '../helpers/store-targets.js';

after(cleanupTargets);

describe('streamed import and the service side by side', () => {
  test('SQLite: no write lock is held while the file is read', async () => {
    const db = await storeTargets[0]!.fresh();
    const importer = await openStore(db.url);
    const service = await openStore(db.url, { statementTimeoutMs: 200 });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let reading!: () => void;
    const started = new Promise<void>((resolve) => (reading = resolve));
    async function* slow(): AsyncGenerator<string> {
      yield '{"devices": [{"id": "a", "token": "1"}';
      reading();
      await gate;
      yield ']}';
    }
    const running = importer.admin.importStream(jsonDatasetSource(slow()));
    await started;
    // The service writes (auth codes) and reads while the import is reading its file.
    await service.recordAuthCode('c', 'p', new Date());
    assert.equal(await service.deviceToken('a'), null);
    release();
    await running;
    assert.equal(await service.deviceToken('a'), '1');
    await importer.close();
    await service.close();
  });
});
