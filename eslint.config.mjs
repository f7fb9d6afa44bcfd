// ESLint flat config (`npm run lint`, run by .ci/run): typescript-eslint's recommended rules on
// every TypeScript file; Prettier owns the formatting (eslint-config-prettier switches the
// stylistic rules off, `prettier --check` runs beside ESLint).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'tools/**', 'data/**', 'ui/**', 'test/artifacts/**', 'load-tests/results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      // Unused names are errors, except those deliberately ignored (`_x`, a rest sibling dropped).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
    },
  },
  {
    // CommonJS config files of the tools (dependency-cruiser).
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly', __dirname: 'readonly' } },
  },
  {
    // Plain CommonJS scripts that run before anything is compiled (bin/ensure-built.js).
    files: ['bin/**/*.js'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', process: 'readonly', console: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // Tests and benchmarks read JSON bodies from HTTP and peers' libraries as they come, and fake
    // collaborators: `any` is allowed there, not in src/.
    files: ['test/**/*.ts', 'load-tests/**/*.ts', 'examples/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  prettier,
);
