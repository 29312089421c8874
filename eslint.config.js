// ESLint (typescript-eslint) for rt's TypeScript: the recommended rules with
// type information, so floating promises, misused promises and unsafe `any`
// crossings are caught — the defects the compiler lets through. The plain
// JavaScript (bin/, the console's build script, the examples' guest code) gets
// the recommended rules without types. Run by `npm test` (through
// `npm run lint`) before the unit and end-to-end tests.

import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** What the guest engine provides (StarlingMonkey's web globals the examples use). */
const GUEST_GLOBALS = Object.fromEntries(['console', 'TextEncoder', 'TextDecoder', 'URL', 'fetch', 'setTimeout', 'clearTimeout'].map((name) => [name, 'readonly']));
/** Node's globals the scripts use, besides the guest's. */
const NODE_GLOBALS = { ...GUEST_GLOBALS, ...Object.fromEntries(['process', 'Buffer', 'AbortSignal', 'AbortController', 'setInterval', 'clearInterval'].map((name) => [name, 'readonly'])) };

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'examples/build/'] },
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
      // A switch over a union (outcomes, messages, WIT kinds) that misses a case added later falls through silently; a default counts as handling the rest.
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      // == coerces; only `== null` (null or undefined) is meant.
      eqeqeq: ['error', 'smart'],
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
  {
    // Plain JavaScript: no TypeScript project to take types from.
    files: ['**/*.js', '**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
  },
  {
    files: ['bin/**/*.js', '**/*.mjs', 'eslint.config.js'],
    languageOptions: { globals: NODE_GLOBALS },
  },
  {
    // Guest code for componentize-js (StarlingMonkey): a browser-like engine, no Node.
    files: ['examples/**/*.js'],
    languageOptions: { globals: GUEST_GLOBALS },
  },
);
