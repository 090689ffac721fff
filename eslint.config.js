// ESLint (flat config). typescript-eslint's type-checked recommended rules over the server code,
// a looser set over tests and tools, and Prettier owning the layout (eslint-config-prettier turns
// every layout rule off). The choices are explained in docs/contributing.md "Code quality".
import js from "@eslint/js";
import prettier from "eslint-config-prettier";
import globals from "globals";
import tseslint from "typescript-eslint";

/** Code that runs in the server process: the strictest set. */
const SERVER = ["src/**/*.ts", "rooms/**/*.ts", "entities/**/*.ts", "schema/**/*.ts"];
/** The web client (client/, docs/client.md): browser code, type-checked with client/tsconfig.json. */
const CLIENT = ["client/**/*.ts"];
/** Tests, benchmarks, examples and build scripts: they poke at internals through `any`. */
const TOOLS = ["test/**/*.ts", "loadtest/**/*.ts", "examples/**/*.ts", "scripts/**/*.ts"];

export default tseslint.config(
  { ignores: ["node_modules/", "dist/", "dist-test/", "world/", "test-results/", "client/dist/"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: "module",
      globals: { ...globals.node },
      // Type information from tsconfig.json, which includes every folder linted here.
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: {
      // `_name` marks a parameter or binding kept on purpose (a callback's shape, a tuple slot).
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrorsIgnorePattern: "^_", destructuredArrayIgnorePattern: "^_", ignoreRestSiblings: true },
      ],
      // `const self = this` for callbacks that get their own `this` (prom-client's collect()).
      "@typescript-eslint/no-this-alias": ["error", { allowedNames: ["self"] }],
      // A floating promise is a lost error; `void promise` marks the ones dropped on purpose.
      "@typescript-eslint/no-floating-promises": ["error", { ignoreVoid: true }],
      // The code writes `list[i]!` as if tsconfig had `noUncheckedIndexedAccess` (about 210 places);
      // this rule (and its --fix) would strip those. Back on once that compiler option is.
      "@typescript-eslint/no-unnecessary-type-assertion": "off",
    },
  },
  {
    files: SERVER,
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
    },
  },
  {
    files: CLIENT,
    languageOptions: { globals: { ...globals.browser } },
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
    },
  },
  {
    files: TOOLS,
    rules: {
      // Tests reach into internals and read untyped JSON answers: `any` is a warning there, and the
      // rules that follow every use of an `any` value (no-unsafe-*) are off.
      "@typescript-eslint/no-explicit-any": "warn",
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-call": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-return": "off",
      // Assertion messages print whatever they are given.
      "@typescript-eslint/restrict-template-expressions": "off",
      // Mocha callbacks and fakes are `async` to match the interface they stand in for.
      "@typescript-eslint/require-await": "off",
      // Destructured helpers (`const { start } = useServerProcess()`) are closures, not methods.
      "@typescript-eslint/unbound-method": "off",
    },
  },
  {
    files: ["test/**/*.ts"],
    languageOptions: { globals: { ...globals.mocha } },
  },
  {
    // Plain JavaScript (config files, scripts/run.mjs): no type information.
    files: ["**/*.{js,mjs,cjs}"],
    ...tseslint.configs.disableTypeChecked,
  },
  { files: ["**/*.cjs"], languageOptions: { sourceType: "commonjs" } },
  prettier,
);
