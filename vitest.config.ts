import { playwright } from "@vitest/browser-playwright";
import { configDefaults, defineConfig, type TestProjectInlineConfiguration } from "vitest/config";
import { chromiumArgs, chromiumExecutable } from "./chromium.config.js";
import { browserCommands } from "./test/browser-commands.js";

/**
 * The node project's slowest files, left out of the fast tier (`npm run test:fast`, a developer's
 * loop): each took 3 s or more on the 2-core machine, most of them starting processes, servers or
 * workers (crash safety alone 98 s; the CLI files 9 to 31 s, every command a process of its own).
 * Without them the tier is 50 of the 66 files and 859 of the 1167 tests, 36 s of CPU time in all.
 * `npm test` runs everything.
 */
const SLOW_NODE_TESTS = [
  "test/node/crash-safety.test.ts",
  "test/node/crash-import.test.ts",
  "test/node/sync-kills.test.ts",
  "test/node/cli-sync.test.ts",
  "test/node/cli.test.ts",
  "test/node/cli-search.test.ts",
  "test/node/cli-archive.test.ts",
  "test/node/cli-stores.test.ts",
  "test/node/cli-export-html.test.ts",
  "test/node/secrets-cli.test.ts",
  "test/node/secrets-export.test.ts",
  "test/node/search.test.ts",
  "test/node/package-exports.test.ts",
  "test/node/serve-api.test.ts",
  "test/node/serve-cli.test.ts",
  "test/node/serve-limits.test.ts",
  "test/node/serve-suites.test.ts",
  "test/node/fuzz-serve.test.ts",
  "test/node/fuzz-serve-links.test.ts",
  "test/node/readme.test.ts",
  "test/node/differential.test.ts",
  "test/node/electron.test.ts",
  "test/node/archive/roundtrip.test.ts",
  "test/node/archive/node-codecs.test.ts",
];

const NODE_PROJECT = { include: ["test/node/**/*.test.ts"], environment: "node", testTimeout: 60_000, hookTimeout: 60_000 } satisfies TestProjectInlineConfiguration["test"];

export default defineConfig({
  test: {
    projects: [
      { test: { name: "node", ...NODE_PROJECT } },
      // A developer's loop (`npm run test:fast`): the node project without SLOW_NODE_TESTS. Not a
      // tier of its own in a whole run: `npm test` runs every project but this one (--project '!fast').
      { test: { name: "fast", ...NODE_PROJECT, exclude: [...configDefaults.exclude, ...SLOW_NODE_TESTS] } },
      {
        test: {
          name: "postgres",
          include: ["test/postgres/**/*.test.ts"],
          environment: "node",
          // One private cluster for the run: started before the tests, stopped and deleted after.
          globalSetup: ["test/postgres/global-setup.ts"],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: "consumers",
          include: ["test/consumers/**/*.test.ts"],
          environment: "node",
          // `npm pack` (which builds everything) and one consumer project with the tarball installed.
          globalSetup: ["test/consumers/global-setup.ts"],
          testTimeout: 300_000,
          hookTimeout: 600_000,
        },
      },
      {
        // Bundled before the run: found during it, Vite reloads the page mid-test (markdown.test.ts's imports).
        optimizeDeps: { include: ["dompurify", "fast-check", "marked", "highlight.js/lib/core", "highlight.js/lib/languages/*"] },
        test: {
          name: "browser",
          include: ["test/browser/**/*.test.ts"],
          testTimeout: 60_000,
          browser: {
            enabled: true,
            headless: true,
            screenshotFailures: false,
            instances: [{ browser: "chromium" }],
            provider: playwright({ launchOptions: { executablePath: chromiumExecutable, args: chromiumArgs } }),
            commands: browserCommands,
          },
        },
      },
    ],
  },
});
