import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { SettingReader } from '../../src/config/setting-reader.js';
import { SETTING_NAMES, SETTINGS } from '../../src/config/settings.js';
import { repoRoot } from '../helpers/test-server.js';

const dir = mkdtempSync(join(tmpdir(), 'sis-config-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function problems(env: Record<string, string>): readonly string[] {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('settings', () => {
  it('docs/operations.md has a row for every setting, in the table order, with its default (and is the only place with the table), and the config reads no other', () => {
    const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
    assert.ok(!readme.includes('| `PORT` |'), 'the settings table stands only in docs/operations.md, not in README.md');
    const docs = readFileSync(join(repoRoot, 'docs', 'operations.md'), 'utf8');
    const section = docs.slice(
      docs.indexOf('\n## Settings\n'),
      docs.indexOf('\n## ', docs.indexOf('\n## Settings\n') + 1),
    );
    const rows = section.split('\n').filter((l) => l.startsWith('| `'));
    assert.deepEqual(
      rows.map((l) => /^\| `([A-Z0-9_]+)` \|/.exec(l)?.[1]),
      SETTINGS.map((s) => s.name),
      'the rows of docs/operations.md "Settings" are the entries of src/config/settings.ts, in its order',
    );
    for (const [i, s] of SETTINGS.entries()) {
      // The default shown is the table's, the one loadConfig uses: (none), or the value first.
      const shown = rows[i]!.split(' | ')[1]!;
      if (s.default === '') assert.equal(shown, '(none)', `${s.name}'s default in docs/operations.md`);
      else
        assert.ok(
          shown.startsWith(`\`${s.default}\``),
          `${s.name}'s default in docs/operations.md is \`${s.default}\`, not ${shown}`,
        );
    }
    const read = new Set<string>();
    loadConfig(
      new Proxy({} as Record<string, string | undefined>, { get: (_t, name: string) => (read.add(name), undefined) }),
    );
    const names = new Set<string>(SETTINGS.map((s) => s.name));
    for (const name of read) assert.ok(names.has(name), `${name} is in src/config/settings.ts`);
    for (const name of names) assert.ok(read.has(name), `${name} is read by loadConfig`);
  });

  it('reads only names of the table, each typed by its entry (a typo does not compile)', () => {
    const r = new SettingReader({ SIS_SHADOW_LIST_ORDER: 'Ignore', SIS_MAX_XML_DEPTH: '3' });
    const port: number = r.read('PORT');
    const order: 'report' | 'ignore' = r.read('SIS_SHADOW_LIST_ORDER');
    const publicUrl: string | null = r.read('SIS_PUBLIC_URL');
    assert.deepEqual([port, order, publicUrl], [8080, 'ignore', null]);
    // @ts-expect-error: a number setting does not read as text
    const wrong: string = r.read('SIS_MAX_BODY_BYTES');
    assert.equal(wrong, 4194304);
    // A wrong value: one problem in the entry's words, and the default's value.
    assert.equal(r.read('SIS_MAX_XML_DEPTH'), 64);
    assert.deepEqual(r.problems, ['SIS_MAX_XML_DEPTH="3": expected a whole number from 4 to 10000']);
    // @ts-expect-error: SIS_SHADOW_SAMPEL is not in the settings table
    assert.throws(() => r.read('SIS_SHADOW_SAMPEL'), /SIS_SHADOW_SAMPEL is not in the settings table/);
  });

  it('has one entry per name, and every default reads without a problem by its own kind', () => {
    assert.equal(SETTING_NAMES.size, SETTINGS.length, 'no name twice');
    for (const s of SETTINGS) {
      if (s.default === '') continue;
      const parsed = s.kind.parse(s.default);
      assert.ok('value' in parsed, `${s.name}'s default ${JSON.stringify(s.default)}: ${JSON.stringify(parsed)}`);
    }
  });

  it('defaults are those documented', () => {
    const c = loadConfig({});
    assert.equal(c.port, 8080);
    assert.equal(c.shutdownGraceMs, 5000);
    assert.equal(c.shutdownTimeoutMs, 30000);
    assert.equal(c.workers, 1);
    assert.equal(c.logFormat, 'auto');
    assert.deepEqual([c.apiKeys, c.allowFrom, c.rateLimit, c.redisUrl, c.tls], [[], [], null, null, null]);
  });

  it('reports every wrong value at once, one message each, naming the setting', () => {
    const found = problems({
      PORT: '70000',
      SIS_SHUTDOWN_GRACE_MS: '-1',
      SIS_WORKERS: 'many',
      SIS_RATE_LIMIT: '10 per second',
      SIS_ALLOW_FROM: '10.0.0.0/8,not-an-ip',
      SIS_API_KEYS: 'my-secret-key',
      SIS_API_KEY_SERVICES: 'NoSuchService',
      SIS_REDIS_URL: 'http://cache',
      SIS_LOG_FORMAT: 'xml',
      SIS_TLS_CERT: join(dir, 'missing.pem'),
      SIS_DATABASE_URL: 'mysql://x',
    });
    const names = [
      'PORT',
      'SIS_SHUTDOWN_GRACE_MS',
      'SIS_WORKERS',
      'SIS_RATE_LIMIT',
      'SIS_ALLOW_FROM',
      'SIS_API_KEYS',
      'SIS_API_KEY_SERVICES',
      'SIS_REDIS_URL',
      'SIS_LOG_FORMAT',
      'SIS_TLS_KEY',
      'SIS_DATABASE_URL',
    ];
    assert.equal(found.length, names.length, found.join('\n'));
    for (const name of names)
      assert.equal(
        found.filter((p) => p.startsWith(`${name}=`) || p.startsWith(`${name}:`)).length,
        1,
        `one message for ${name}`,
      );
    assert.ok(!found.join('\n').includes('my-secret-key'), 'a key pasted in clear is not echoed');
  });

  it('parses the production settings', () => {
    const digest = createHash('sha256').update('k1').digest('hex');
    const c = loadConfig({
      SIS_WORKERS: 'auto',
      SIS_RATE_LIMIT: '6000/1m',
      SIS_ALLOW_FROM: '10.0.0.0/8, ::1, 2001:db8::/32',
      SIS_API_KEYS: `sha256:${digest.toUpperCase()}`,
      SIS_API_KEY_SERVICES: 'authcodesending.asmx,PushNotificationMobile',
      SIS_REDIS_URL: 'redis://127.0.0.1:6379/2',
    });
    assert.ok(c.workers >= 1);
    assert.deepEqual(c.rateLimit, { limit: 6000, windowMs: 60_000 });
    assert.deepEqual(c.allowFrom, ['10.0.0.0/8', '::1/128', '2001:db8::/32']);
    assert.equal(c.apiKeys[0]!.toString('hex'), digest);
    assert.deepEqual(c.apiKeyServices, ['AuthCodeSending', 'PushNotificationMobile']);
    assert.deepEqual(loadConfig({ SIS_RATE_LIMIT: '50/500ms' }).rateLimit, { limit: 50, windowMs: 500 });
    assert.deepEqual(loadConfig({ SIS_RATE_LIMIT: '5/s' }).rateLimit, { limit: 5, windowMs: 1000 });
  });
});

describe('SIS_CONFIG_FILE', () => {
  it('reads a JSON file, under the environment', () => {
    const file = join(dir, 'sis.json');
    writeFileSync(
      file,
      JSON.stringify({ PORT: 9000, SIS_DEMO_DATA: false, SIS_ALLOW_FROM: ['10.0.0.0/8', '::1'], LOG_LEVEL: 'warn' }),
    );
    const c = loadConfig({ SIS_CONFIG_FILE: file, LOG_LEVEL: 'debug' });
    assert.equal(c.port, 9000);
    assert.equal(c.demoData, false);
    assert.deepEqual(c.allowFrom, ['10.0.0.0/8', '::1/128']);
    assert.equal(c.logLevel, 'debug', 'the environment wins');
  });

  it('reads a .env file: comments, export, quotes', () => {
    const file = join(dir, 'sis.env');
    writeFileSync(
      file,
      '# production\nexport PORT=9001\nSIS_AUTH_REALM="School #1"\nSIS_BASE_PATH=/School/  # mounted here\n\nHOST=\'127.0.0.1\'\n',
    );
    const c = loadConfig({ SIS_CONFIG_FILE: file });
    assert.deepEqual([c.port, c.authRealm, c.basePath, c.host], [9001, 'School #1', '/School/', '127.0.0.1']);
  });

  it('reports unknown names, bad lines, bad values and a missing file', () => {
    const file = join(dir, 'bad.env');
    writeFileSync(file, 'PROT=8080\nthis is not a setting\nSIS_WORKERS=lots\n');
    const found = problems({ SIS_CONFIG_FILE: file });
    assert.equal(found.length, 3, found.join('\n'));
    assert.ok(found.some((p) => /unknown setting PROT$/.test(p)));
    assert.ok(found.some((p) => /bad\.env:2: expected NAME=value$/.test(p)));
    assert.ok(found.some((p) => /^SIS_WORKERS="lots"/.test(p)));
    assert.match(problems({ SIS_CONFIG_FILE: join(dir, 'nope.json') })[0]!, /^SIS_CONFIG_FILE=.*no such file/);
    writeFileSync(join(dir, 'bad.json'), '{"PORT": ');
    assert.match(problems({ SIS_CONFIG_FILE: join(dir, 'bad.json') })[0]!, /not valid JSON/);
  });
});

describe('sis hash-key', () => {
  const main = join(repoRoot, 'dist', 'src', 'cli', 'main.js');
  it('hashes a given key, from the argument or standard input', () => {
    const expected = `sha256:${createHash('sha256').update('s3cret').digest('hex')}\n`;
    assert.equal(execFileSync(process.execPath, [main, 'hash-key', 's3cret'], { encoding: 'utf8' }), expected);
    assert.equal(
      execFileSync(process.execPath, [main, 'hash-key', '-'], { input: 's3cret\n', encoding: 'utf8' }),
      expected,
    );
  });

  it('makes a new key and its hash, which the configuration accepts', () => {
    const out = execFileSync(process.execPath, [main, 'hash-key'], { encoding: 'utf8' });
    const m = /^key: {2}(\S+)\nhash: (sha256:[0-9a-f]{64})\n$/.exec(out);
    assert.ok(m, out);
    assert.equal(m[2], `sha256:${createHash('sha256').update(m[1]!).digest('hex')}`);
    assert.equal(loadConfig({ SIS_API_KEYS: m[2]! }).apiKeys.length, 1);
  });
});
