/**
 * `npm start`: builds what is out of date (the CLI: `npm run build`; the viewer: `vite build
 * web-demo`), builds the sample store when it is missing or older than its script
 * (samples/store, scripts/build-samples.ts), then runs `sessionkit serve --agent-stores --root
 * samples/store`: the user's agent stores (read-only) and the samples, on 127.0.0.1:4174 (a free
 * port when that one is taken). Its one stdout line is serve's URL; progress goes to stderr.
 * Arguments after `--` go to serve (`npm start -- --port 0`, `npm start -- --write`). Ctrl+C stops
 * the server, then this.
 */
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { mkdir, mkdtemp, rename, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { SAMPLE_STORE_MARKER } from "../cli/serve/sample-store.js";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const SAMPLES = join(REPO, "samples", "store");
const DEFAULT_PORT = 4174;
const say = (text: string) => void process.stderr.write(`npm start: ${text}\n`);

/** The newest modification time of the files at or below `paths` (0 when none exist). */
function newest(...paths: string[]): number {
  let latest = 0;
  for (const path of paths) {
    const info = statSync(path, { throwIfNoEntry: false });
    if (!info) continue;
    if (!info.isDirectory()) latest = Math.max(latest, info.mtimeMs);
    else for (const entry of readdirSync(path)) latest = Math.max(latest, newest(join(path, entry)));
  }
  return latest;
}

/** True when `output` is missing or older than any of `inputs`. */
function stale(output: string, inputs: string[]): boolean {
  const built = statSync(output, { throwIfNoEntry: false });
  return !built || built.mtimeMs < newest(...inputs.map((input) => join(REPO, input)));
}

function run(command: string, args: string[]): Promise<void> {
  // Build output goes to stderr: stdout carries only the URL.
  const child = spawn(command, args, { cwd: REPO, stdio: ["ignore", process.stderr, "inherit"] });
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code, signal) => (code === 0 ? resolve() : reject(new Error(`${command} ${args.join(" ")} failed (${signal ?? `exit ${code}`})`))));
  });
}

/** Whether nothing listens on `port` of 127.0.0.1 now. */
function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(false));
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
  });
}

const started = performance.now();
const seconds = (since = started) => `${((performance.now() - since) / 1000).toFixed(1)} s`;

/** Runs one build step, saying what and how long. */
async function step(what: string, work: () => Promise<void>): Promise<void> {
  const begun = performance.now();
  say(`${what}…`);
  await work();
  say(`${what}: ${seconds(begun)}`);
}

// The CLI: `npm run build` (dist/, the bin package.json names) when its sources changed.
const bin = join(REPO, (JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { bin: { sessionkit: string } }).bin.sessionkit);
const cliInputs = ["src", "adapters", "cli", "web-demo/src/export", "web-demo/app-csp.ts", "scripts/cli-bundle.ts", "package.json", "tsconfig.json", "tsconfig.build.json"];
if (stale(bin, cliInputs)) await step("building the CLI (npm run build)", () => run(process.platform === "win32" ? "npm.cmd" : "npm", ["run", "--silent", "build"]));

// The viewer: web-demo/dist when its sources (or the core it bundles) changed.
const viewer = join(REPO, "web-demo");
if (stale(join(viewer, "dist", "index.html"), ["web-demo/src", "web-demo/index.html", "web-demo/export.html", "web-demo/vite.config.ts", "web-demo/app-csp.ts", "src", "adapters", "package.json"])) {
  // Imported only when needed: loading vite costs a warm start half a second.
  await step("building the viewer (vite build web-demo)", async () => {
    const { build } = await import("vite");
    await build({ configFile: join(viewer, "vite.config.ts"), logLevel: "warn" });
  });
}

// The sample store, when missing or built by an older scripts/build-samples.ts (its marker, written
// last, is older than the script): built aside and moved into place, so an interrupted build leaves none.
if (stale(join(SAMPLES, SAMPLE_STORE_MARKER), ["scripts/build-samples.ts"])) {
  await step("building the sample store (samples/store)", async () => {
    const { buildSamples } = await import("./build-samples.js");
    await mkdir(join(REPO, "samples"), { recursive: true });
    const aside = await mkdtemp(join(REPO, "samples", ".store-"));
    try {
      await buildSamples(aside);
      await rm(SAMPLES, { recursive: true, force: true });
      await rename(aside, SAMPLES);
    } finally {
      await rm(aside, { recursive: true, force: true });
    }
  });
}

const extra = process.argv.slice(2);
const port = extra.includes("--port") ? [] : ["--port", String((await portIsFree(DEFAULT_PORT)) ? DEFAULT_PORT : 0)];
say(`ready in ${seconds()}; starting sessionkit serve`);
// Its own process group: a Ctrl+C reaches it once, from here (npm and tsx relay signals too).
const serve = spawn(process.execPath, [bin, "serve", "--agent-stores", "--root", SAMPLES, ...port, ...extra], { cwd: REPO, stdio: "inherit", detached: true });
let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  serve.kill("SIGINT");
};
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, stop);
process.on("exit", () => serve.exitCode === null && serve.kill("SIGINT"));
const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => serve.once("exit", (code, signal) => resolve([code, signal])));
process.exitCode = code ?? (signal ? 1 : 0);
