/**
 * The request target as ASMX reads it: the service file matched case-insensitively, what follows
 * `/X.asmx/` as the operation path (decoded), the query kept encoded, and anything else no target.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseTarget } from '../../src/bindings/request-target.js';

describe('parseTarget', () => {
  it('reads the file, the operation path and the query', () => {
    assert.deepEqual(parseTarget('/Svc.asmx', '/'), { serviceKey: 'svc', opPath: undefined, query: '' });
    assert.deepEqual(parseTarget('/sVC.ASMX?WSDL', '/'), { serviceKey: 'svc', opPath: undefined, query: 'WSDL' });
    assert.deepEqual(parseTarget('/Svc.asmx/', '/'), { serviceKey: 'svc', opPath: '', query: '' });
    assert.deepEqual(parseTarget('/Svc.asmx/Op?a=%31', '/'), { serviceKey: 'svc', opPath: 'Op', query: 'a=%31' });
    assert.deepEqual(parseTarget('/Svc.asmx%2FOp%0A', '/'), { serviceKey: 'svc', opPath: 'Op\n', query: '' });
    assert.deepEqual(parseTarget('/Svc.asmx/a/b', '/'), { serviceKey: 'svc', opPath: 'a/b', query: '' });
    assert.deepEqual(parseTarget('/X.asmx.asmx', '/'), { serviceKey: 'x.asmx', opPath: undefined, query: '' });
    assert.deepEqual(parseTarget('/base/Svc.asmx/Op', '/base/'), { serviceKey: 'svc', opPath: 'Op', query: '' });
  });

  it('is null for anything that names no .asmx file under the base path', () => {
    for (const url of ['/', '/.asmx', '/Svc.asm', '/a/Svc.asmx', '/Svc.asmxx', '/%E0%A4%A', '/other/Svc.asmx']) {
      assert.equal(parseTarget(url, url === '/other/Svc.asmx' ? '/base/' : '/'), null, url);
    }
  });
});
