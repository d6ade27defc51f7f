/**
 * The files that dist's modules load through `new URL("./…", import.meta.url)`, each one
 * self-contained and next to the module that names it, so that a bundler that leaves such URLs
 * alone (esbuild) works once the files are copied beside its bundle:
 *
 *   dist/adapters/opfs/sessionkit-opfs-worker.js   the OPFS worker as one module without imports
 *                                                 (replaces tsc's output, which imports its siblings)
 *   dist/src/search/sqlite3.wasm                   SQLite's WebAssembly, copied from its package
 *
 *   tsx scripts/build-assets.ts   (after `tsc -p tsconfig.build.json`, part of `npm run build`)
 */
import { copyFile, mkdir, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const REPO = join(fileURLToPath(import.meta.url), "../..");

export const OPFS_WORKER_ASSET = "dist/adapters/opfs/sessionkit-opfs-worker.js";
export const SQLITE_WASM_ASSET = "dist/src/search/sqlite3.wasm";

export async function buildAssets(): Promise<void> {
  const worker = join(REPO, OPFS_WORKER_ASSET);
  // tsc's map and declarations describe the module this bundle replaces.
  await Promise.all([".js.map", ".d.ts", ".d.ts.map"].map((suffix) => rm(worker.replace(/\.js$/, suffix), { force: true })));
  await build({
    entryPoints: [join(REPO, "adapters/opfs/sessionkit-opfs-worker.ts")],
    outfile: worker,
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    minify: true,
    logLevel: "warning",
  });

  // The package exports its wasm by this name in both of its layouts (dist/ and sqlite-wasm/jswasm/).
  const wasm = createRequire(import.meta.url).resolve("@sqlite.org/sqlite-wasm/sqlite3.wasm");
  const wasmCopy = join(REPO, SQLITE_WASM_ASSET);
  await mkdir(dirname(wasmCopy), { recursive: true });
  await copyFile(wasm, wasmCopy);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildAssets();
