// ESLint (flat config) for the hand-written JavaScript and TypeScript of the Node binding and the
// Node drivers elsewhere in the repository; formatting is prettier's (/.prettierrc.json). Run by
// scripts/lint.sh from the repository root with --config bindings-node/eslint.config.mjs.
import js from '@eslint/js'
import globals from 'globals'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  // Generated and committed, never edited by hand: index.js/index.d.ts by napi-rs (`npm run build`),
  // redelay.js/redelay.d.ts by tsc from lib/redelay.ts (`npm run build:ts`).
  {
    ignores: [
      '**/node_modules/**',
      '**/target/**',
      'bindings-node/index.js',
      'bindings-node/index.d.ts',
      'bindings-node/redelay.js',
      'bindings-node/redelay.d.ts',
    ],
  },
  {
    files: ['**/*.js', '**/*.cjs', '**/*.mjs'],
    extends: [js.configs.recommended],
    languageOptions: { globals: { ...globals.node } },
  },
  {
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
  },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.recommended],
    languageOptions: { globals: { ...globals.node } },
  },
  {
    // The methods a class gets from ops() (lib/redelay.ts) are typed in an interface of the same
    // name, merged into the class: the merging this rule refuses, made on purpose.
    files: ['bindings-node/lib/**/*.ts'],
    rules: { '@typescript-eslint/no-unsafe-declaration-merging': 'off' },
  },
)
