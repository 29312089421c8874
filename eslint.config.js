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
/** A fetch-event handler's besides (componentize-js's `fetch-event` feature): the event and what answers it. */
const FETCH_EVENT_GLOBALS = Object.fromEntries(['addEventListener', 'Request', 'Response', 'Headers'].map((name) => [name, 'readonly']));
/** Node's globals the scripts use, besides the guest's. */
const NODE_GLOBALS = { ...GUEST_GLOBALS, ...Object.fromEntries(['process', 'Buffer', 'AbortSignal', 'AbortController', 'setInterval', 'clearInterval'].map((name) => [name, 'readonly'])) };

/**
 * Waits made of timers, which tests do not make: a promise a timer settles
 * (`await new Promise((r) => setTimeout(r, ms))`, a sleep() built of one),
 * node:timers/promises (`await setTimeout(ms)`, `scheduler.wait`), an awaited
 * sleep(), delay(), wait() or pause(). A test waits for the state itself
 * with eventually(), or, where time must pass on purpose, says why with
 * letTimePass(ms, why): test/support/eventually.ts, the one file in test/
 * that makes them. A timer that acts later (a client's next bytes, a release)
 * is no wait. test/unit/test-conventions.test.ts shows what is caught.
 */
const TIMER = '/^set(Timeout|Interval)$/';
const TIMED_WAIT = 'A wait made of a timer: wait for the state itself with eventually(), or let time pass on purpose with letTimePass(ms, why) (test/support/eventually.ts).';
export const TIMED_WAITS = [
  `NewExpression[callee.name='Promise'] :matches(CallExpression[callee.name=${TIMER}], CallExpression[callee.property.name=${TIMER}])`,
  `:matches(ImportDeclaration, ImportExpression)[source.value=/^(node:)?timers\\/promises$/]`,
  `CallExpression[callee.name='promisify'][arguments.0.name=${TIMER}]`,
  `AwaitExpression > CallExpression[callee.name=/^(sleep|delay|wait|pause|setTimeout)$/]`,
].map((selector) => ({ selector, message: TIMED_WAIT }));

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
      '@typescript-eslint/only-throw-error': ['error', { allow: [{ from: 'file', name: 'Mismatch' }, { from: 'file', name: 'HandleMismatch' }] }],
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
    // Tests wait for states, not for time (TIMED_WAITS).
    files: ['test/**/*.ts'],
    ignores: ['test/support/eventually.ts'],
    rules: { 'no-restricted-syntax': ['error', ...TIMED_WAITS] },
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
    languageOptions: { globals: { ...GUEST_GLOBALS, ...FETCH_EVENT_GLOBALS } },
  },
);
