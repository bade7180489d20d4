import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { AsmxText } from '../../src/errors/asmx-text.js';
import { repoRoot } from '../helpers/test-server.js';

/** Every TypeScript file of src/ but the table itself, by its path from the repository root. */
function sources(): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts')) files.set(relative(repoRoot, path), readFileSync(path, 'utf8'));
    }
  };
  walk(join(repoRoot, 'src'));
  files.delete(join('src', 'errors', 'asmx-text.ts'));
  return files;
}

describe('ASMX words (src/errors/asmx-text.ts)', () => {
  const src = sources();

  it('is frozen', () => {
    assert.ok(Object.isFrozen(AsmxText));
    assert.equal(
      Reflect.set(AsmxText, 'WebMissingParameter', () => 'changed'),
      false,
    );
  });

  it('has no entry that src/ does not use', () => {
    const unused = Object.keys(AsmxText).filter(
      (key) => ![...src.values()].some((text) => new RegExp(`\\bAsmxText\\.${key}\\b`).test(text)),
    );
    assert.deepEqual(unused, [], 'remove the entries no code uses');
  });

  it('is the only home of its fixed texts and of the chain joiner', () => {
    const fixed = Object.values(AsmxText)
      .filter((entry) => entry.length === 0)
      .map((entry) => (entry as () => string)());
    const found: string[] = [];
    for (const [path, text] of src) {
      for (const words of fixed) if (text.includes(words)) found.push(`${path}: ${words}`);
      // A chain built by hand: ' ---> ' in code (comments may name it).
      const code = text.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
      if (code.includes(' ---> ')) found.push(`${path}: ' ---> ' (use chain())`);
    }
    assert.deepEqual(found, [], 'take these words from AsmxText');
  });
});
