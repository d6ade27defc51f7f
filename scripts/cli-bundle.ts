/**
 * The `sessionkit` command (dist/bin/sessionkit.mjs, package.json's `bin`) as minified ES modules:
 * they start in a fraction of the time Node takes to resolve and load the CLI's modules one by one
 * (dozens of files of our own and of zod's). The entry holds only what finds the command; each
 * command's module and code are chunks beside it (sessionkit-*.mjs) that its dynamic `import()`
 * loads, so a command loads only its own code. The CLI tests run the same bundle.
 *
 *   tsx scripts/cli-bundle.ts   (part of `npm run build`)
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build, type BuildOptions } from "esbuild";

const REPO = join(fileURLToPath(import.meta.url), "../..");

/**
 * An ESM bundle holding CommonJS packages (ws) needs a `require` for their `require("events")`;
 * ws's optional native helpers stay out (ws runs without them).
 */
export const ESM_BUNDLE_OF_CJS = { banner: { js: 'import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);' } };

/**
 * How the CLI is bundled, wherever it is. `.mjs`: the bundle is an ES module wherever it is put.
 * The chunks lie beside the entry, so that code finding files from its own `import.meta.url` (the
 * viewer's files) finds them as it would from the entry.
 */
const CLI_BUNDLE_OPTIONS: BuildOptions = {
  entryPoints: { sessionkit: join(REPO, "cli/main.ts") },
  bundle: true,
  splitting: true,
  chunkNames: "sessionkit-[name]-[hash]",
  outExtension: { ".js": ".mjs" },
  platform: "node",
  format: "esm",
  target: "node20",
  // Node 20 has the `v` flag and \p{…}; esbuild would rewrite such literals (string-width's) as
  // `new RegExp(…)`, which V8 compiles when the module loads (13 to 36 ms for \p{RGI_Emoji})
  // where it compiles a literal on first use.
  supported: { "regexp-set-notation": true, "regexp-unicode-property-escapes": true },
  minify: true,
  legalComments: "none",
  // ws's and pg's optional native helpers (not installed; they run without them); SQLite's WASM
  // build, which finds sqlite3.wasm beside its own module, is loaded from its package.
  external: ["bufferutil", "utf-8-validate", "pg-native", "@sqlite.org/sqlite-wasm"],
  ...ESM_BUNDLE_OF_CJS,
  logLevel: "silent",
};

/** Writes the CLI bundle into `dir` (with `more` options); returns the entry's path. */
export async function bundleCliInto(dir: string, more: BuildOptions = {}): Promise<string> {
  await build({ ...CLI_BUNDLE_OPTIONS, ...more, outdir: dir });
  return join(dir, "sessionkit.mjs");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  // Chunk names hold their hash: the previous build's would stay beside the new ones.
  rmSync(join(REPO, "dist/bin"), { recursive: true, force: true });
  await bundleCliInto(join(REPO, "dist/bin"));
}
