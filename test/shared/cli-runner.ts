/**
 * The `sessionkit` CLI as a real child process, for the Node CLI tests.
 *
 * The CLI runs from cli/main.ts bundled once per test file as the shipped `bin` is bundled
 * (scripts/cli-bundle.ts): `node --import tsx` costs ~0.45 s of CPU per start, and a test file
 * starts the CLI dozens of times.
 */
import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { bundleCliInto } from "../../scripts/cli-bundle.js";

export { ESM_BUNDLE_OF_CJS } from "../../scripts/cli-bundle.js";

export const REPO = join(dirname(fileURLToPath(import.meta.url)), "../..");

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** The working directory; the repository by default. */
  cwd?: string;
  env?: Record<string, string>;
}

/** The file Node loads for `@sqlite.org/sqlite-wasm` (its exports' "node" condition). */
const SQLITE_WASM_NODE_ENTRY = createRequire(import.meta.url).resolve("@sqlite.org/sqlite-wasm");

/** Bundles the CLI into `dir`; returns the bundle's path. */
export async function bundleCli(dir: string): Promise<string> {
  // SQLite's WASM build finds sqlite3.wasm beside its own module: a bundle in a temp dir loads it
  // from the package (the shipped bin finds the package as any module does).
  return bundleCliInto(dir, {
    plugins: [
      {
        name: "sqlite-wasm-in-place",
        setup(pluginBuild) {
          pluginBuild.onResolve({ filter: /^@sqlite\.org\/sqlite-wasm$/ }, () => ({ path: SQLITE_WASM_NODE_ENTRY, external: true }));
        },
      },
    ],
  });
}

/**
 * Runs the bundled CLI with `args`; $PI_CODING_AGENT_DIR is cleared and $XDG_CACHE_HOME is a
 * folder beside the bundle (the CLI's listing cache stays in the test's temp dir), unless `env`
 * sets them.
 */
export function runCli(bundle: string, args: readonly string[], options: CliOptions = {}): Promise<CliResult> {
  const env = { ...process.env, PI_CODING_AGENT_DIR: "", XDG_CACHE_HOME: join(dirname(bundle), "cache"), ...options.env };
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [bundle, ...args],
      { cwd: options.cwd ?? REPO, env, maxBuffer: 256 * 1024 * 1024 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
    );
  });
}
