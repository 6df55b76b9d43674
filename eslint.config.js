// ESLint: the recommended rules of ESLint and typescript-eslint, part of `npm test`.
import js from '@eslint/js'
import globals from 'globals'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['dist/', 'client/dist/', 'node_modules/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      // `_name` marks a value that is deliberately unused (a destructured-away field, a callback's slot).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
    },
  },
  // Type-aware rules on the server: a promise is awaited, returned or handed to something that
  // handles its rejection, and never passed where a callback's result is ignored.
  {
    files: ['src/**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
  // The dashboard's browser code (ui/build.mjs runs under Node).
  { files: ['ui/src/**'], languageOptions: { globals: { ...globals.browser } } },
)
