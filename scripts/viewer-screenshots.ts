/**
 * Screenshots of the viewer for the README (docs/screenshots/), in serve mode as `npm start` runs
 * it: `sessionkit serve` (in this process) over a pi store in a temp dir (the bundled sample as pi
 * wrote it, and the viewer bench's 100,000-entry session) and the sample store. The list across
 * stores with the sample open (light and dark), tools and thinking, search in a session and across
 * sessions, the 100k session, a narrow screen; and that session exported to HTML from file://.
 *
 *   npx vite build web-demo && npx tsx scripts/viewer-screenshots.ts
 *
 * The 100k session is written by pi on first use (test/shared/viewer-session.ts caches it under
 * bench/.data/viewer); the sample store is built into the temp dir.
 */
import { execFile } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { chromium, type Page } from "playwright";
import { startServe } from "../cli/serve/server.js";
import { sessionDirFor, sessionFileName } from "../src/session/paths.js";
import { ensureViewerSession } from "../test/shared/viewer-session.js";
import { chromiumArgs, chromiumExecutable } from "../chromium.config.js";
import { buildSamples } from "./build-samples.js";

const project = fileURLToPath(new URL("..", import.meta.url));
const out = join(project, "docs", "screenshots");
await mkdir(out, { recursive: true });
const temp = await mkdtemp(join(tmpdir(), "sessionkit-screenshots-"));

/** Puts a session file where pi keeps it; returns its storage path. */
async function putSession(root: string, text: string, copyFrom?: string): Promise<string> {
  const header = JSON.parse(text.slice(0, text.indexOf("\n"))) as { id: string; timestamp: string; cwd: string };
  const path = join(sessionDirFor(header.cwd), sessionFileName(header.timestamp, header.id));
  await mkdir(join(root, sessionDirFor(header.cwd)), { recursive: true });
  if (copyFrom) await copyFile(copyFrom, join(root, path));
  else await writeFile(join(root, path), text);
  return path;
}

const piRoot = join(temp, "pi-agent");
const samplePath = await putSession(piRoot, await readFile(join(project, "web-demo/src/samples/pi-sample.jsonl"), "utf8"));
process.stdout.write("the 100,000-entry session (pi writes it the first time)…\n");
const large = ensureViewerSession(100_000);
const largeHead = (await readFile(large.path)).subarray(0, 4096).toString("utf8");
const largePath = await putSession(piRoot, largeHead, large.path);
const samplesRoot = join(temp, "samples");
await buildSamples(samplesRoot);

const server = await startServe({
  stores: [
    { root: piRoot, label: "pi ~/.pi/agent", agent: "pi", cacheDir: join(temp, "cache-pi") },
    { root: samplesRoot, label: "samples/store", cacheDir: join(temp, "cache-samples") },
  ],
  port: 0,
  viewerDir: join(project, "web-demo", "dist"),
});
const piStore = server.stores[0]!.id;
const link = (path: string, extra = "") => `${server.url}#store=${piStore}&session=${encodeURIComponent(path)}${extra}`;
const browser = await chromium.launch({ executablePath: chromiumExecutable, args: chromiumArgs, headless: true });

async function ready(page: Page): Promise<void> {
  await page.waitForFunction(() => document.body.dataset.status === "ready" && document.querySelector("#messages .entry"), null, { timeout: 300_000 });
  await page.waitForTimeout(600); // images and highlighting arrive
}

async function searchAll(page: Page, query: string): Promise<void> {
  await page.fill("#global-search", query);
  await page.press("#global-search", "Enter");
  await page.waitForFunction(() => document.body.dataset.status === "ready" && document.querySelector("#global-results .list-count"), null, { timeout: 300_000 });
}

try {
  for (const scheme of ["light", "dark"] as const) {
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 }, colorScheme: scheme });
    await page.goto(link(samplePath));
    await ready(page);
    await page.screenshot({ path: join(out, `app-${scheme}.png`) });
    if (scheme === "dark") {
      // The other branch, tools and thinking: the first turns of the sample.
      await page.locator("#tree .tree-node", { hasText: "A test that fails only" }).click();
      await page.keyboard.press("o");
      await page.waitForTimeout(400);
      await page.screenshot({ path: join(out, "tools-dark.png") });
    } else {
      await searchAll(page, "readme");
      await page.click('.filter-btn[data-filter="all"]');
      await page.fill("#tree-search", "readme");
      await page.waitForTimeout(400);
      await page.screenshot({ path: join(out, "search-light.png") });
    }
    await page.close();
  }

  const huge = await browser.newPage({ viewport: { width: 1440, height: 900 }, colorScheme: "dark" });
  await huge.goto(link(largePath));
  await ready(huge);
  await huge.screenshot({ path: join(out, "large-dark.png") });
  await huge.close();

  const narrow = await browser.newPage({ viewport: { width: 420, height: 860 }, colorScheme: "light" });
  await narrow.goto(link(samplePath));
  await ready(narrow);
  await narrow.screenshot({ path: join(out, "narrow.png") });
  await narrow.click("#menu");
  await narrow.waitForTimeout(300);
  await narrow.screenshot({ path: join(out, "narrow-tree.png") });
  await narrow.close();

  // The 100k session as one HTML file (sessionkit export --html), opened from file://.
  const exported = join(temp, "large.html");
  await promisify(execFile)(process.execPath, ["--import", "tsx", join(project, "cli/main.ts"), "export", "--html", large.path, "-o", exported], { cwd: project });
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 }, colorScheme: "dark" });
  await page.goto(pathToFileURL(exported).href, { timeout: 300_000 });
  await ready(page);
  await page.screenshot({ path: join(out, "export-100k-dark.png") });
  await page.close();
} finally {
  await browser.close();
  await server.close();
  await rm(temp, { recursive: true, force: true });
}
process.stdout.write(`screenshots in ${out}\n`);
