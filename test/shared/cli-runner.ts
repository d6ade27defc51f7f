/**
 * The `sessionkit` CLI as a real child process, for the Node CLI tests.
 *
 * The CLI runs from cli/main.ts bundled once per test file with esbuild (the compiler tsx
 * itself uses): `node --import tsx` costs ~0.45 s of CPU per start, and a test file starts the
 * CLI dozens of times.
 */
import { execFile } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

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

/** Bundles the CLI into `dir`; returns the bundle's path. */
export async function bundleCli(dir: string): Promise<string> {
  const bundle = join(dir, "sessionkit.mjs");
  await build({
    entryPoints: [join(REPO, "cli/main.ts")],
    outfile: bundle,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "silent",
    // pg is CommonJS: its require() of Node's modules needs a real require in an ES module; it
    // loads its optional native binding (pg-native, not installed) only when asked for it.
    banner: { js: 'import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);' },
    external: ["pg-native"],
  });
  return bundle;
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
