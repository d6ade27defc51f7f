import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  // Its own cache, so this server never shares pre-bundled deps with vitest's browser project.
  cacheDir: fileURLToPath(new URL("../../node_modules/.vite-e2e", import.meta.url)),
  // Pre-bundled up front: a dependency discovered mid-test makes Vite reload the page.
  optimizeDeps: { include: ["idb", "zod", "@zip.js/zip.js"], entries: ["index.html"] },
  server: { host: "127.0.0.1", port: 4173, strictPort: true },
  logLevel: "warn",
});
