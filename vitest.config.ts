import { playwright } from "@vitest/browser-playwright";
import { defineConfig } from "vitest/config";
import { chromiumArgs, chromiumExecutable } from "./chromium.config.js";
import { browserCommands } from "./test/browser-commands.js";

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "node",
          include: ["test/node/**/*.test.ts"],
          environment: "node",
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
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
