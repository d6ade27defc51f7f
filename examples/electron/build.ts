/**
 * Bundles the example for Electron into examples/electron/dist: main (ESM), preload (CommonJS: a
 * sandboxed preload cannot load modules) and the page's script; `electron` stays external. The
 * example imports `sessionkit/…` as an app would; in the repo, esbuild resolves those through
 * tsconfig.json's `paths` (to the sources), as `tsc` does.
 *   npx tsx examples/electron/build.ts && npx electron examples/electron/dist/main.js
 */
import { copyFile, mkdir } from "node:fs/promises";
import nodePath from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const here = nodePath.dirname(fileURLToPath(import.meta.url));
const out = nodePath.join(here, "dist");
await mkdir(out, { recursive: true });
const common = { bundle: true, external: ["electron"], logLevel: "info" as const };
await build({ ...common, entryPoints: [nodePath.join(here, "main.ts")], outfile: nodePath.join(out, "main.js"), platform: "node", format: "esm", target: "node20" });
await build({ ...common, entryPoints: [nodePath.join(here, "preload.ts")], outfile: nodePath.join(out, "preload.cjs"), platform: "node", format: "cjs", target: "node20" });
await build({ ...common, entryPoints: [nodePath.join(here, "renderer.ts")], outfile: nodePath.join(out, "renderer.js"), platform: "browser", format: "esm", target: "chrome120" });
await copyFile(nodePath.join(here, "index.html"), nodePath.join(out, "index.html"));
