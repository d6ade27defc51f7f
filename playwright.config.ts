import { defineConfig } from "@playwright/test";
import { chromiumArgs, chromiumExecutable } from "./chromium.config.js";

const port = 4173;

export default defineConfig({
  testDir: "e2e",
  timeout: 30_000,
  // Two cores shared with other engineers: one worker keeps timings sane.
  workers: 1,
  forbidOnly: !!process.env.CI,
  reporter: process.env.CI ? "line" : "list",
  use: {
    baseURL: `http://127.0.0.1:${port}/`,
    headless: true,
    launchOptions: { executablePath: chromiumExecutable, args: chromiumArgs },
  },
  projects: [{ name: "chromium", use: { browserName: "chromium" } }],
  webServer: [
    {
      command: "npx vite --config e2e/app/vite.config.ts",
      url: `http://127.0.0.1:${port}/`,
      reuseExistingServer: !process.env.CI,
      timeout: 60_000,
    },
    {
      // The viewer is tested as it ships: built, then served by vite preview.
      command: "npx vite build web-demo && npx vite preview web-demo --port 4174 --strictPort --host 127.0.0.1",
      url: "http://127.0.0.1:4174/",
      reuseExistingServer: !process.env.CI,
      timeout: 120_000,
    },
  ],
});
