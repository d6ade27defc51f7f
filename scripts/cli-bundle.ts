/**
 * The `sessionkit` command (dist/bin/sessionkit.mjs, package.json's `bin`) as minified ES modules:
 * they start in a fraction of the time Node takes to resolve and load the CLI's modules one by one
 * (dozens of files of our own and of zod's). The entry holds only what finds the command; each
 * command's module and code are chunks beside it (sessionkit-*.mjs) that its dynamic `import()`
 * loads, so a command loads only its own code. Beside them, the search and history commands'
 * whole run as one script (sessionkit-search.script.js: cli/search-script.ts runs it through a V8
 * code cache, which is for scripts, not modules). The CLI tests run the same bundle.
 *
 *   tsx scripts/cli-bundle.ts   (part of `npm run build`)
 */
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build, type BuildOptions, type Plugin } from "esbuild";
import { SEARCH_SCRIPT_FILE, SEARCH_SCRIPT_PARAMETERS } from "../cli/search-script.js";

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

/**
 * The search script: CommonJS (a script has no `import`/`export`) in a function expression of
 * SEARCH_SCRIPT_PARAMETERS (esbuild makes it strict, as the modules are); `import.meta` is the
 * loader's argument, and SQLite's package a module forwarding to the loader's import of it: a vm
 * script cannot `import()`.
 */
const SEARCH_SCRIPT_OPTIONS: BuildOptions = {
  ...CLI_BUNDLE_OPTIONS,
  entryPoints: [join(REPO, "cli/search-script-entry.ts")],
  splitting: false,
  chunkNames: undefined,
  outExtension: undefined,
  format: "cjs",
  define: { "import.meta": SEARCH_SCRIPT_PARAMETERS[2] },
  external: (CLI_BUNDLE_OPTIONS.external ?? []).filter((name) => name !== "@sqlite.org/sqlite-wasm"),
  banner: { js: `(function (${SEARCH_SCRIPT_PARAMETERS.join(", ")}) {` },
  footer: { js: "})" },
};

/**
 * SQLite's package in the search script (before any other plugin's resolution of it: the tests'
 * bundle has one); and no database client: the script hands a `--store` command line back
 * (search-script-entry.ts), so cli/store.ts's import of the postgres adapter is never run there.
 */
const SEARCH_SCRIPT_IMPORTS: Plugin = {
  name: "search-script-imports",
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /^@sqlite\.org\/sqlite-wasm$/ }, () => ({ path: join(REPO, "cli/sqlite-in-search-script.ts") }));
    pluginBuild.onResolve({ filter: /\/adapters\/postgres\/index\.js$/ }, () => ({ path: "postgres adapter", namespace: "left-out" }));
    pluginBuild.onLoad({ filter: /.*/, namespace: "left-out" }, () => ({
      contents: 'export function postgresStorage() { throw new Error("the search script has no database client"); }',
      loader: "js",
    }));
  },
};

/** Writes the CLI bundle into `dir` (with `more` options); returns the entry's path. */
export async function bundleCliInto(dir: string, more: BuildOptions = {}): Promise<string> {
  const script = join(dir, SEARCH_SCRIPT_FILE);
  await Promise.all([build({ ...CLI_BUNDLE_OPTIONS, ...more, outdir: dir }), build({ ...SEARCH_SCRIPT_OPTIONS, ...more, plugins: [SEARCH_SCRIPT_IMPORTS, ...(more.plugins ?? [])], outfile: script })]);
  if (/\bimport\(/.test(readFileSync(script, "utf8"))) throw new Error(`${script}: an import() left in the search script, which a vm script cannot run`);
  return join(dir, "sessionkit.mjs");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  // Chunk names hold their hash: the previous build's would stay beside the new ones.
  rmSync(join(REPO, "dist/bin"), { recursive: true, force: true });
  await bundleCliInto(join(REPO, "dist/bin"));
}
