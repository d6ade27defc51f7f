import { createServer } from "node:net";
import { defineConfig } from "@playwright/test";
import { chromiumArgs, chromiumExecutable } from "./chromium.config.js";

/** A port nothing listens on now, from the OS. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

// Chosen once by the runner; its workers load this file again and inherit the runner's env, so
// every process agrees on the ports. The servers are always our own (never reused): a server
// another checkout left on some port can not answer these tests.
process.env.SESSIONKIT_E2E_APP_PORT ??= String(await freePort());
process.env.SESSIONKIT_E2E_VIEWER_PORT ??= String(await freePort());
const appPort = Number(process.env.SESSIONKIT_E2E_APP_PORT);
const viewerPort = Number(process.env.SESSIONKIT_E2E_VIEWER_PORT);

export default defineConfig({
  testDir: "e2e",
  timeout: 30_000,
  // Two cores shared with other engineers: one worker keeps timings sane.
  workers: 1,
  forbidOnly: !!process.env.CI,
  reporter: process.env.CI ? "line" : "list",
  use: {
    baseURL: `http://127.0.0.1:${appPort}/`,
    headless: true,
    launchOptions: { executablePath: chromiumExecutable, args: chromiumArgs },
  },
  projects: [{ name: "chromium", use: { browserName: "chromium" } }],
  webServer: [
    {
      command: `npx vite --config e2e/app/vite.config.ts --port ${appPort} --strictPort`,
      url: `http://127.0.0.1:${appPort}/`,
      reuseExistingServer: false,
      timeout: 60_000,
    },
    {
      // The viewer is tested as it ships: built, then served by vite preview.
      command: `npx vite build web-demo && npx vite preview web-demo --port ${viewerPort} --strictPort --host 127.0.0.1`,
      url: `http://127.0.0.1:${viewerPort}/`,
      reuseExistingServer: false,
      timeout: 120_000,
    },
  ],
});
