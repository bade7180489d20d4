// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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
    // XML's forbidden characters are control characters: these patterns name them on purpose.
    files: ['src/xml/escape.ts', 'src/xml/envelope-scanner.ts'],
    rules: { 'no-control-regex': 'off' },
  },
  {
    // File formats (src/dataset) are read and written by the CLI on top of the store; the store
    // never depends on them.
    files: ['src/store/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['**/dataset/*'], message: 'src/store must not import src/dataset' }] }] },
  },
  {
    files: ['**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
);
