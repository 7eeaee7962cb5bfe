// Lint rules for the whole repository: typescript-eslint's recommended set, no `any`, no console in library code.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['dist/**', 'dist-check/**', 'node_modules/**', 'out/**', '.bench/**', '.tmp/**', 'coverage/**', 'viewer/vendor/**', '**/*.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  { files: ['**/*.ts'], rules: { 'no-undef': 'off' } },
  { files: ['viewer/**/*.js'], languageOptions: { globals: { ...globals.browser } } },
  {
    // Library code never talks to the terminal or the process: only src/cli does.
    files: ['src/**/*.ts'],
    ignores: ['src/cli/**'],
    rules: { 'no-console': 'error', 'no-restricted-globals': ['error', { name: 'process', message: 'Only src/cli touches process.' }] },
  },
);
