// Lint rules for every package. `core`, `client` (but its `node` entry) and `web` must stay browser-safe: they may not import
// Node built-ins, which the restricted-imports rule below enforces.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
      'coverage/**',
      'packages/core/src/proto/gen/**',
      'packages/web/public/**',
      // benchmarks bundled for their child processes (bench/support/upstream.ts)
      'bench/support/.*.compiled.mjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        console: 'readonly',
        process: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        TextEncoder: 'readonly',
        TextDecoder: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        performance: 'readonly',
        crypto: 'readonly',
        fetch: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
        queueMicrotask: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  {
    files: ['packages/core/src/**/*.ts', 'packages/web/src/**/*.ts', 'packages/client/src/**/*.ts'],
    ignores: ['packages/client/src/node.ts', 'packages/client/src/node/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({
            name,
            message: 'core, client and web run in browsers: no Node built-ins.',
          })),
        },
      ],
      'no-restricted-globals': [
        'error',
        { name: 'Buffer', message: 'core, client and web run in browsers: use Uint8Array.' },
        { name: 'process', message: 'core, client and web run in browsers.' },
      ],
    },
  },
);
