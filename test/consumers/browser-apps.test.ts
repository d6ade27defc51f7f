/**
 * The packed package (the consumers project's tarball) in the apps of two consumers, each installed with npm in
 * a temp folder and built as its users build: a Vite app, and an esbuild bundle beside which the
 * OPFS worker and sqlite3.wasm are copied (or served elsewhere and named with opfsStorage's
 * workerUrl and configureSqlite's wasmUrl). Each page (browser-apps/checks.js) writes a session
 * on IndexedDB and on OPFS, reopens and reads it, and searches it, in Chromium over a static server.
 */
import { execFile } from "node:child_process";
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { extname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { build as esbuild } from "esbuild";
import { chromium, type Browser } from "playwright";
import { build as viteBuild } from "vite";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { chromiumArgs, chromiumExecutable } from "../../chromium.config.js";
import { REPO } from "./consumer.js";

const run = promisify(execFile);
const APP_SOURCES = fileURLToPath(new URL("./browser-apps/", import.meta.url));

/** The files an esbuild user copies beside the bundle: the README's command, without its target folder. */
const COPY_ASSETS = /^cp node_modules\/sessionkit\/.* /m.exec(await readFile(join(REPO, "README.md"), "utf8"))![0].trimEnd();

const MIME: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".wasm": "application/wasm",
  ".css": "text/css; charset=utf-8",
};

// No favicon: every request the server sees comes from the app.
const html = (script: string) => `<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>consumer</title></head><body><script type="module" src="${script}"></script></body></html>`;

interface Served {
  origin: string;
  /** Every request, in order: path and status. */
  requests: { path: string; status: number }[];
  close(): Promise<void>;
}

/** Serves `dir` on 127.0.0.1 (a secure context: OPFS and Web Locks work over plain http there). */
async function serveDir(dir: string): Promise<Served> {
  const requests: Served["requests"] = [];
  const server = createServer((request, response) => {
    const path = decodeURIComponent(new URL(request.url ?? "/", "http://host").pathname);
    // normalize() of an absolute path cannot climb above "/": the file stays inside dir.
    const file = join(dir, normalize(path), path.endsWith("/") ? "index.html" : "");
    readFile(file).then(
      (body) => {
        requests.push({ path, status: 200 });
        response.writeHead(200, { "content-type": MIME[extname(file)] ?? "application/octet-stream" }).end(body);
      },
      () => {
        requests.push({ path, status: 404 });
        response.writeHead(404).end();
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { origin: `http://127.0.0.1:${port}`, requests, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

interface RoundTrip {
  path: string;
  context: { role: string; text: string }[];
  hits: { path: string; role: string }[];
}
type PageResult = { indexeddb: RoundTrip; opfs: RoundTrip; error?: undefined } | { error: string };

let browser: Browser;
const folders: string[] = [];

beforeAll(async () => {
  browser = await chromium.launch({ executablePath: chromiumExecutable, args: chromiumArgs });
});
afterAll(async () => {
  await browser?.close();
  await Promise.all(folders.map((dir) => rm(dir, { recursive: true, force: true })));
});

/** A consumer's folder with the tarball installed and the app's sources in src/. */
async function installConsumer(name: string): Promise<string> {
  const tarball = inject("tarball");
  const dir = await mkdtemp(join(tmpdir(), `sessionkit-consumer-${name}-`));
  folders.push(dir);
  await writeFile(join(dir, "package.json"), JSON.stringify({ name: `consumer-${name}`, private: true, type: "module" }));
  await run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", tarball], { cwd: dir });
  await cp(APP_SOURCES, join(dir, "src"), { recursive: true });
  return dir;
}

/** Opens `url` in a fresh browser context (its own IndexedDB and OPFS) and waits for the page's result. */
async function runPage(url: string): Promise<PageResult> {
  const context = await browser.newContext();
  const problems: string[] = [];
  try {
    const page = await context.newPage();
    page.on("pageerror", (error) => problems.push(String(error)));
    page.on("console", (message) => message.type() === "error" && problems.push(message.text()));
    await page.goto(url);
    const done = await page.waitForFunction(() => "sessionkitResult" in globalThis, undefined, { timeout: 60_000 }).catch(() => null);
    if (!done) return { error: `no result from the page; its errors: ${problems.join(" | ")}` };
    return (await page.evaluate(() => (globalThis as { sessionkitResult?: unknown }).sessionkitResult)) as PageResult;
  } finally {
    await context.close();
  }
}

/** A word for one page: letters and digits only, one token for the search. */
const freshWord = () => `zq${Math.random().toString(36).slice(2, 10)}`;

function expectRoundTrips(result: PageResult, word: string): void {
  expect(result.error).toBeUndefined();
  if (result.error !== undefined) return;
  for (const [backend, trip] of [["idb", result.indexeddb], ["opfs", result.opfs]] as const) {
    const stored = `${word}${backend}`;
    expect(trip.context).toEqual([
      { role: "user", text: `where is the ${stored}` },
      { role: "assistant", text: `the ${stored} is here` },
    ]);
    expect(trip.hits.sort((a, b) => a.role.localeCompare(b.role))).toEqual([
      { path: trip.path, role: "assistant" },
      { path: trip.path, role: "user" },
    ]);
  }
}

const failed = (served: Served) => served.requests.filter((request) => request.status !== 200);

describe("the packed package in consumers' browser apps", () => {
  it("a Vite app emits the OPFS worker and sqlite3.wasm itself", { timeout: 300_000 }, async () => {
    const dir = await installConsumer("vite");
    await writeFile(join(dir, "index.html"), html("./src/main.js"));
    await viteBuild({ root: dir, configFile: false, logLevel: "warn", build: { outDir: join(dir, "out"), emptyOutDir: true } });

    const served = await serveDir(join(dir, "out"));
    try {
      const word = freshWord();
      expectRoundTrips(await runPage(`${served.origin}/?word=${word}`), word);
      expect(failed(served)).toEqual([]);
      // Vite renames what it emits (name-hash.ext) and serves it from out/assets.
      const fetched = served.requests.map((request) => request.path);
      expect(fetched).toContainEqual(expect.stringMatching(/^\/assets\/sqlite3-[\w-]+\.wasm$/));
      expect(fetched).toContainEqual(expect.stringMatching(/^\/assets\/sessionkit-opfs-worker-[\w-]+\.js$/));
    } finally {
      await served.close();
    }
  });

  it("an esbuild bundle finds them copied beside it, or where workerUrl and wasmUrl say", { timeout: 300_000 }, async () => {
    const dir = await installConsumer("esbuild");
    const bundle = { bundle: true, format: "esm", platform: "browser", absWorkingDir: dir, logLevel: "warning" } as const;
    // As the README says: an ES module bundle (import.meta.url kept), the two files copied beside it.
    await esbuild({ ...bundle, entryPoints: ["src/main.js"], outdir: "out/app", splitting: true });
    await run("sh", ["-c", `${COPY_ASSETS} out/app/`], { cwd: dir });
    await writeFile(join(dir, "out/app/index.html"), html("./main.js"));
    // The files served from elsewhere: nothing beside the bundle.
    await esbuild({ ...bundle, entryPoints: ["src/explicit.js"], outdir: "out/explicit" });
    await mkdir(join(dir, "out/vendor"));
    await run("sh", ["-c", `${COPY_ASSETS} out/vendor/`], { cwd: dir });
    await writeFile(join(dir, "out/explicit/index.html"), html("./explicit.js"));

    const served = await serveDir(join(dir, "out"));
    try {
      for (const [page, assetDir] of [["app", "/app/"], ["explicit", "/vendor/"]] as const) {
        served.requests.length = 0;
        const word = freshWord();
        expectRoundTrips(await runPage(`${served.origin}/${page}/?word=${word}`), word);
        expect(failed(served)).toEqual([]);
        const fetched = served.requests.map((request) => request.path);
        expect(fetched).toContain(`${assetDir}sqlite3.wasm`);
        expect(fetched).toContain(`${assetDir}sessionkit-opfs-worker.js`);
      }
    } finally {
      await served.close();
    }
  });
});
