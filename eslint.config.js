/**
 * ESLint checks what the compiler lets through and costs bugs, nothing of style: a promise nobody
 * awaits or catches (its failure is lost, or it races what follows), a promise where a plain value
 * is expected (an async callback that an event emitter or a forEach never waits for), and in the
 * core a global looked up past the type checker. `npm run lint`.
 */
import { defineConfig } from "eslint/config";
import tseslint from "typescript-eslint";

export default defineConfig(
  { ignores: ["**/dist/", "**/node_modules/", "samples/", "bench/.data/", "test-results/", "playwright-report/"] },
  {
    files: ["{src,adapters,cli,test,bench,scripts,e2e}/**/*.ts", "web-demo/src/**/*.ts"],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { "@typescript-eslint": tseslint.plugin },
    // Directives written for rules not run here (no-control-regex) are left alone.
    linterOptions: { reportUnusedDisableDirectives: "off" },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": "error",
    },
  },
  {
    // The core type-checks without DOM or Node globals (tsconfig.core.json); a cast of globalThis
    // would reach one anyway. base64 may use Node's Buffer when it is there (DESIGN.md §1).
    files: ["src/**/*.ts"],
    ignores: ["src/blobs/base64.ts"],
    rules: {
      "no-restricted-syntax": [
        "error",
        {
          selector: ":matches(TSAsExpression, TSTypeAssertion, TSSatisfiesExpression) > Identifier.expression[name='globalThis']",
          message: "The core uses only the web APIs Node and browsers share (types/universal-web.d.ts), not globals found by a cast.",
        },
      ],
    },
  },
);
