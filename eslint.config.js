// ESLint flat config: typescript-eslint's type-checked rules over every TypeScript file the
// project type-checks; formatting is Prettier's (eslint-config-prettier turns off clashing rules).
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'node_modules/',
      'native/build/',
      'coverage/',
      'test/client/schema.d.ts',
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
  prettier,
);
