/** SIS_* variables that are no setting, and the closest setting they are named with. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { editDistance, unknownSettings } from '../../src/config/unknown-settings.js';

describe('unknown settings', () => {
  it('counts a swap of neighbouring letters as one edit', () => {
    assert.equal(editDistance('SAMPEL', 'SAMPLE'), 1);
    assert.equal(editDistance('PORT', 'PORT'), 0);
    assert.equal(editDistance('', 'ABC'), 3);
    assert.equal(editDistance('KITTEN', 'SITTING'), 3);
  });

  it('names each unknown SIS_ variable with the closest setting, and nothing else', () => {
    const found = unknownSettings({
      SIS_DATBASE_URL: 'sqlite::memory:',
      SIS_LOG_SUCESS_SAMPLE: '10',
      SIS_DATABASE_URL: 'sqlite::memory:',
      SIS_TEST_POSTGRES_URL: 'postgres://x',
      PATH: '/bin',
      LOG_LEVEL: 'info',
    });
    assert.deepEqual(found, [
      { name: 'SIS_DATBASE_URL', closest: 'SIS_DATABASE_URL' },
      { name: 'SIS_LOG_SUCESS_SAMPLE', closest: 'SIS_LOG_SUCCESS_SAMPLE' },
    ]);
  });
});
