// ESLint (typescript-eslint) for rt's TypeScript: the recommended rules with
// type information, so floating promises, misused promises and unsafe `any`
// crossings are caught — the defects the compiler lets through. Run by
// `npm test` (through `npm run lint`) before the unit and end-to-end tests.

import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'examples/**/*.js', 'examples/build/', 'console/build.mjs', 'bin/', 'eslint.config.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // Codec and glue functions live on plain objects and never use `this`; the rule cannot tell them from methods.
      '@typescript-eslint/unbound-method': 'off',
      // An async function without await still promises its callers a Promise (and turns throws into rejections).
      '@typescript-eslint/require-await': 'off',
      // The codec's Mismatch is thrown without a stack on purpose (lib/wit/codec-errors.ts): it is caught and rethrown as a CodecError.
      '@typescript-eslint/only-throw-error': ['error', { allow: [{ from: 'file', name: 'Mismatch' }] }],
      // Unused bindings are dead code; a leading underscore marks one kept on purpose (a callback's position).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    // Tests and benchmarks call jco's tools (parse, componentEmbed, componentNew), which are declared `any`.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
);
