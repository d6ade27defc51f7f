/**
 * The `sessionkit` command as one file (dist/bin/sessionkit.mjs, package.json's `bin`): one
 * minified ES module starts in a fraction of the time Node takes to resolve and load the CLI's
 * modules one by one (dozens of files of our own and of zod's). The CLI tests run the same bundle.
 *
 *   tsx scripts/cli-bundle.ts   (part of `npm run build`)
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build, type BuildOptions } from "esbuild";

const REPO = join(fileURLToPath(import.meta.url), "../..");

/**
 * An ESM bundle holding CommonJS packages (ws) needs a `require` for their `require("events")`;
 * ws's optional native helpers stay out (ws runs without them).
 */
export const ESM_BUNDLE_OF_CJS = { banner: { js: 'import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);' } };

/** How the CLI is bundled, wherever it is. `.mjs`: the bundle is an ES module wherever it is put. */
export const CLI_BUNDLE_OPTIONS: BuildOptions = {
  entryPoints: [join(REPO, "cli/main.ts")],
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  minify: true,
  legalComments: "none",
  // ws's and pg's optional native helpers (not installed; they run without them); SQLite's WASM
  // build, which finds sqlite3.wasm beside its own module, is loaded from its package.
  external: ["bufferutil", "utf-8-validate", "pg-native", "@sqlite.org/sqlite-wasm"],
  ...ESM_BUNDLE_OF_CJS,
  logLevel: "silent",
};

/** Writes the CLI bundle into `dir` (with `more` options); returns its path. */
export async function bundleCliInto(dir: string, more: BuildOptions = {}): Promise<string> {
  const outfile = join(dir, "sessionkit.mjs");
  await build({ ...CLI_BUNDLE_OPTIONS, ...more, outfile });
  return outfile;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await bundleCliInto(join(REPO, "dist/bin"));
