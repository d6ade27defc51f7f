/**
 * The session viewer: `npx vite build web-demo` writes web-demo/dist;
 * `npx vite preview web-demo --port 4174 --strictPort --host 127.0.0.1` serves it.
 */
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  // Relative asset URLs: the built viewer works from any path it is served under.
  base: "./",
  // Its own cache: never share pre-bundled deps with vitest or the e2e test page.
  cacheDir: fileURLToPath(new URL("../node_modules/.vite-viewer", import.meta.url)),
  build: { outDir: "dist", emptyOutDir: true, target: "es2022" },
  // The OPFS adapter starts a module worker that imports the rpc code: ES module output.
  worker: { format: "es" },
  server: { host: "127.0.0.1", port: 4174, strictPort: true },
  preview: { host: "127.0.0.1", port: 4174, strictPort: true },
});
