/**
 * Consumer projects for the packed package: a temp folder with a package.json, the tarball and
 * the tools a user would have installed from the registry (pinned to the versions this
 * repository tests with), so that every import of "sessionkit" resolves as in a user's project.
 */
import { execFile } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO = fileURLToPath(new URL("../..", import.meta.url));

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `command` in `cwd`; never throws for an exit code (the caller asserts on it). */
export function run(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = {}, timeoutMs = 300_000): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd, env: { ...process.env, ...env }, timeout: timeoutMs, maxBuffer: 64 << 20 }, (error, stdout, stderr) => {
      if (error && typeof error.code !== "number") reject(new Error(`${command} ${args.join(" ")}: ${error.message}\n${stderr}`));
      else resolve({ code: error ? (error.code as number) : 0, stdout, stderr });
    });
  });
}

/** Like `run`, failing with the command's output unless it exits 0. */
export async function runOk(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<Run> {
  const result = await run(command, args, cwd, env);
  if (result.code !== 0) throw new Error(`${command} ${args.join(" ")} exited ${result.code}\n${result.stdout}\n${result.stderr}`);
  return result;
}

/** `npm pack` of the repository into `dir` (its prepare script builds everything first); the tarball's path. */
export async function packRepository(dir: string): Promise<string> {
  const { stdout } = await runOk("npm", ["pack", "--json", "--pack-destination", dir], REPO);
  const [packed] = JSON.parse(stdout.slice(stdout.indexOf("["))) as { filename: string }[];
  return join(dir, packed!.filename);
}

/** The exact version of `name` this repository installs (package-lock.json). */
async function repoVersion(name: string): Promise<string> {
  const lock = JSON.parse(await readFile(join(REPO, "package-lock.json"), "utf8")) as { packages: Record<string, { version: string }> };
  const entry = lock.packages[`node_modules/${name}`];
  if (!entry) throw new Error(`${name} is not in package-lock.json`);
  return entry.version;
}

/** Development tools the consumers use, at the repository's versions. */
const TOOLS = ["@types/node", "typescript", "esbuild", "vitest"];

/** A consumer project in `dir`: `npm install` of the tarball and the tools. */
export async function createConsumer(dir: string, tarball: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }, null, 2));
  const tools = await Promise.all(TOOLS.map(async (name) => `${name}@${await repoVersion(name)}`));
  await runOk("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error", tarball, ...tools], dir);
}

/** The public subpaths of the installed package, as import specifiers ("sessionkit", "sessionkit/…"). */
export async function publicSpecifiers(consumer: string): Promise<string[]> {
  const pkg = JSON.parse(await readFile(join(consumer, "node_modules/sessionkit/package.json"), "utf8")) as { exports: Record<string, unknown> };
  return Object.keys(pkg.exports)
    .filter((subpath) => subpath !== "./package.json")
    .map((subpath) => (subpath === "." ? "sessionkit" : `sessionkit/${subpath.slice(2)}`));
}
