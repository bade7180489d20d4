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
  'cli',
  'app',
  'shadow',
  'http',
  'access',
  'outbox',
  'retention',
  'observe',
  'bindings',
  'metadata',
  'config',
  'operations',
  'sms',
  'dataset',
  'store',
  'xml',
  'reply',
  'logging',
  'address',
  'contract',
  'errors',
];
const layerZones = LAYERS.flatMap((lower, i) =>
  LAYERS.slice(0, i).map((higher) => ({
    target: `./src/${lower}`,
    from: `./src/${higher}`,
    message: `src/${lower} is below src/${higher} (eslint.config.js LAYERS): move the shared code down instead.`,
  })),
);

/**
 * The wings of src/store/, from the top down, as LAYERS for folders: a wing imports only from wings
 * below it. The engines share a level and never import each other; the face (the files directly in
 * src/store/: the Store interface and its types) is the bottom.
 */
const STORE_WINGS = [['open'], ['sqlite', 'postgres'], ['sql'], ['import'], ['schema'], [null]];
const wingPath = (wing) => (wing === null ? './src/store/*.ts' : `./src/store/${wing}`);
const wingName = (wing) => (wing === null ? 'the face of src/store' : `src/store/${wing}`);
const storeZones = STORE_WINGS.flatMap((level, i) =>
  level.flatMap((lower) =>
    [...STORE_WINGS.slice(0, i).flat(), ...level.filter((w) => w !== lower)].map((higher) => ({
      target: wingPath(lower),
      from: wingPath(higher),
      message: `${wingName(lower)} may not import ${wingName(higher)} (eslint.config.js STORE_WINGS): move the shared code down instead.`,
    })),
  ),
);

/** Where a dialect's name may be compared: the engines' own folders, and the one place a URL picks one. */
const ENGINE_FILES = ['src/store/sqlite/**', 'src/store/postgres/**', 'src/store/open/open-store.ts'];

/** A dialect's name compared (==, !=, ===, !==, or a switch case), in any operand order. */
function dialectNameChecks() {
  const name = '/^(sqlite|postgres)$/';
  const message =
    'Do not compare dialect names outside src/store/sqlite/ and src/store/postgres/: ask the Dialect (src/store/schema/dialect.ts) what it does, adding a member there if need be.';
  return [
    { selector: `BinaryExpression[operator=/^[!=]==?$/] > Literal[value=${name}]`, message },
    { selector: `SwitchCase > Literal.test[value=${name}]`, message },
  ];
}

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
    // No file imports itself through others, no folder imports one above it (LAYERS), no store wing one above it (STORE_WINGS).
    files: ['**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      ...importX.flatConfigs.typescript.settings,
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })],
    },
    rules: {
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'import-x/no-restricted-paths': ['error', { zones: [...layerZones, ...storeZones] }],
      // Imports in one order everywhere (Node's, then packages, then ours, each alphabetical), so a
      // file's dependencies read at a glance and merges do not fight over the order; `npm run
      // format` puts them in it.
      'import-x/order': [
        'error',
        {
          groups: ['builtin', 'external', ['internal', 'parent', 'sibling', 'index']],
          'newlines-between': 'never',
          alphabetize: { order: 'asc', caseInsensitive: true },
        },
      ],
    },
  },
  {
    // Engines are modules (src/store/sqlite/, src/store/postgres/): code elsewhere asks its Dialect what it does, never which one it is.
    files: ['src/**/*.ts'],
    ignores: ENGINE_FILES,
    rules: {
      'no-restricted-syntax': ['error', ...dialectNameChecks()],
    },
  },
  {
    // XML's forbidden characters are control characters: these patterns name them on purpose.
    files: ['src/xml/escape.ts', 'src/xml/envelope-scanner.ts'],
    rules: { 'no-control-regex': 'off' },
  },
  {
    files: ['**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', AbortSignal: 'readonly' } },
  },
);
