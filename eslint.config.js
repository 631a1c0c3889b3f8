// Lint is strict about what bites an async server: floating promises, misused
// promises and `any` leaking across boundaries.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      '.fuzz-venv/**',
      '.bench-venv/**',
      'eslint.config.js',
      '**/node_modules/**',
      '.terdut/**',
      '.terdut-*/**',
      'tools/bin/**',
      'deploy/**',
      'coverage/**',
      'packages/web/dist/**',
      'packages/server/dist/**',
      'packages/contract/dist/**',
      'packages/*/dist.*.tmp/**',
      'test/web/screenshots/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // node:test's test()/describe() return promises the runner itself awaits.
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            {
              from: 'package',
              package: 'node:test',
              name: ['test', 'describe', 'it', 'suite', 'before', 'after', 'beforeEach', 'afterEach'],
            },
          ],
        },
      ],
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    files: ['packages/web/src/**/*.tsx'],
    rules: {
      // A disabled button drops the keyboard focus to the page's body; Button keeps it (aria-disabled).
      'no-restricted-syntax': [
        'error',
        {
          selector: "JSXOpeningElement[name.name='button'] > JSXAttribute[name.name='disabled']",
          message:
            "A disabled <button> loses the keyboard focus (it falls to the page's body): use Button from packages/web/src/ui.tsx with busy= or disabled=, which says so with aria-disabled and keeps the focus.",
        },
      ],
    },
  },
  {
    files: ['**/*.test.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      // Tests read JSON answers field by field; the assertions are the type check.
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
);
