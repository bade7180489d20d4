/** `sis serve` names an unknown SIS_ variable with the closest setting, whether it starts or not. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runToExit, startServe, stopServe } from '../helpers/serve-process.js';

describe('sis serve with an unknown SIS_ variable', () => {
  it('warns, naming the closest setting, beside a bad setting it refuses', async () => {
    const exit = await runToExit('sqlite::memory:', { SIS_DATBASE_URL: 'sqlite:x.db', SIS_MAX_BODY_BYTES: 'abc' });
    assert.equal(exit.code, 78);
    const warning = exit.logs.find((l) => l['setting'] === 'SIS_DATBASE_URL');
    assert.ok(warning, `no warning in ${exit.stdout}`);
    assert.equal(warning['level'], 40);
    assert.equal(warning['closest'], 'SIS_DATABASE_URL');
    assert.match(String(warning['msg']), /SIS_DATBASE_URL is not a setting .*did you mean SIS_DATABASE_URL\?/);
  });

  it('warns once and serves', async () => {
    const served = await startServe('sqlite::memory:', { SIS_LOG_SUCESS_SAMPLE: '10' });
    try {
      const warnings = served.logs.filter((l) => l['setting'] === 'SIS_LOG_SUCESS_SAMPLE');
      assert.equal(warnings.length, 1);
      assert.equal(warnings[0]!['closest'], 'SIS_LOG_SUCCESS_SAMPLE');
    } finally {
      await stopServe(served);
    }
  });
});
