// ESLint flat config: typescript-eslint's type-checked rules over every TypeScript file the
// project type-checks; formatting is Prettier's (eslint-config-prettier turns off clashing rules).
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/**
 * The layers (docs/architecture.md): src/solvers (numerics, a library) < src/jobs (BullMQ, Redis)
 * < src/api (HTTP), the service's wiring (src/main.ts, config.ts, shutdown.ts) over them, and the
 * dashboard (browser code, a client of the public API) beside them; production code never imports
 * test/. `no-restricted-imports` matches the import's text, so a pattern is a relative path that
 * climbs (`../`) into a layer's folder or module: no folder or module inside src/ bears those names,
 * so such a path can only reach the layer (test/architecture.test.ts checks the resolved graph).
 */
const climbingInto = (...names) => `^(\\.\\./)+(${names.join('|')})(/|\\.js$|$)`;
const layerRule = (message, ...names) => ({
  'no-restricted-imports': [
    'error',
    {
      patterns: [
        { regex: climbingInto('test'), message: 'Production code imports nothing from test/.' },
        ...(names.length > 0 ? [{ regex: climbingInto(...names), message }] : []),
      ],
    },
  ],
});

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'node_modules/',
      'native/build/',
      'coverage/',
      'src/dashboard/apiSchema.d.ts',
      'src/solvers/linalg/wasm/rowKernelsModule.ts',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: globals.node,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
    },
  },
  { files: ['**/*.js', '**/*.mjs'], extends: [tseslint.configs.disableTypeChecked] },
  // The dashboard runs in the browser (src/dashboard/tsconfig.json gives it the DOM types).
  { files: ['src/dashboard/**/*.ts'], languageOptions: { globals: globals.browser } },
  // The layers; each block names every pattern its files obey (a later block replaces the rule's options).
  { files: ['src/**/*.ts'], rules: layerRule('') },
  {
    files: ['src/solvers/**/*.ts'],
    rules: layerRule(
      'src/solvers is pure numerics usable as a library: nothing from src/jobs, src/api, src/dashboard or the service wiring.',
      'jobs',
      'api',
      'dashboard',
      'main',
      'config',
      'shutdown',
    ),
  },
  {
    files: ['src/jobs/**/*.ts'],
    rules: layerRule('src/jobs sits under the HTTP layer: nothing from src/api, src/dashboard or src/main.', 'api', 'dashboard', 'main'),
  },
  {
    files: ['src/api/**/*.ts'],
    rules: layerRule('src/api serves the built dashboard (dist/dashboard) as files, never imports it.', 'dashboard', 'main'),
  },
  {
    files: ['src/dashboard/**/*.ts'],
    rules: layerRule(
      'The dashboard is browser code and a client of the public API: nothing from the server side (src/api, src/jobs, src/solvers).',
      'api',
      'jobs',
      'solvers',
      'main',
      'config',
      'shutdown',
    ),
  },
  prettier,
);
