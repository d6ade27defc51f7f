import { playwright } from "@vitest/browser-playwright";
import { defineConfig } from "vitest/config";

// Debian's Chromium: test tools may not download their own browser on these machines.
const chromium = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const chromiumArgs = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
];

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
        // The shared corpus sits beside the project (../shared); the browser corpus test reads it.
        server: { fs: { allow: ["../shared/corpus"] } },
        test: {
          name: "browser",
          include: ["test/browser/**/*.test.ts"],
          testTimeout: 60_000,
          browser: {
            enabled: true,
            headless: true,
            screenshotFailures: false,
            instances: [{ browser: "chromium" }],
            provider: playwright({ launchOptions: { executablePath: chromium, args: chromiumArgs } }),
          },
        },
      },
    ],
  },
});
