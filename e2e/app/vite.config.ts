import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  // Its own cache, so this server never shares pre-bundled deps with vitest's browser project.
  cacheDir: fileURLToPath(new URL("../../node_modules/.vite-e2e", import.meta.url)),
  // Pre-bundled up front: a dependency discovered mid-test makes Vite reload the page.
  optimizeDeps: { include: ["idb", "zod/mini", "zod/v4/locales/en.js", "@zip.js/zip.js"], entries: ["index.html"] },
  // No watcher, no HMR socket: other engineers edit src/ while tests run, and a reload mid-test
  // would destroy the page's state.
  server: { host: "127.0.0.1", strictPort: true, hmr: false, ws: false, watch: null }, // the port: --port
  logLevel: "warn",
});
