// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { importX } from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

/**
 * The folders of src/, from the top down: a folder may import only from folders below it, so no
 * two folders import each other. A new folder goes into this list at its level.
 */
const LAYERS = [
  'cli', 'app', 'http', 'access', 'outbox', 'observe', 'bindings', 'metadata', 'config',
  'operations', 'dataset', 'store', 'xml', 'logging', 'contract', 'errors',
];
const layerZones = LAYERS.flatMap((lower, i) =>
  LAYERS.slice(0, i).map((higher) => ({
    target: `./src/${lower}`,
    from: `./src/${higher}`,
    message: `src/${lower} is below src/${higher} (eslint.config.js LAYERS): move the shared code down instead.`,
  })),
);

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'data/', 'test/artifacts/'] },
  js.configs.recommended,
  ...tseslint.configs.strict,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-non-null-assertion': 'off',
      // `void` is the honest type of a void operation's result.
      '@typescript-eslint/no-invalid-void-type': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  {
    // No file imports itself through others, and no folder imports one above it (LAYERS).
    files: ['**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      ...importX.flatConfigs.typescript.settings,
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })],
    },
    rules: {
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'import-x/no-restricted-paths': ['error', { zones: layerZones }],
    },
  },
  {
    // XML's forbidden characters are control characters: these patterns name them on purpose.
    files: ['src/xml/escape.ts', 'src/xml/envelope-scanner.ts'],
    rules: { 'no-control-regex': 'off' },
  },
  {
    files: ['**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
);
