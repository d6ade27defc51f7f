/**
 * Screenshots of the viewer for the README (docs/screenshots/), in serve mode as `npm start` runs
 * it: `sessionkit serve` (in this process) over a pi store in a temp dir (the bundled sample as pi
 * wrote it, a corpus session with screenshots in it, a session that grows while it is shown, and
 * the viewer bench's 100,000-entry session) and the sample store. The list across stores with the
 * sample open (light and dark), tools and thinking, search in a session and across sessions, the
 * 100k session, a narrow screen; that session exported to HTML from file://; and in light and
 * dark, wide (1280×900) and phone (390×844): a session with images, the tree on a branched
 * session, a session followed as it grows.
 *
 *   npx vite build web-demo && npx tsx scripts/viewer-screenshots.ts
 *
 * The 100k session is written by pi on first use (test/shared/viewer-session.ts caches it under
 * bench/.data/viewer); the sample store is built into the temp dir.
 */
import { execFile } from "node:child_process";
import { appendFile, copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
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
/** 57 entries with five screenshots (415×409 and 197×426 px) in tool results. */
const imagesPath = await putSession(piRoot, await readFile(join(project, "test/fixtures/corpus/hassanad94__dotfiles/2026-05-11T16-45-25-267Z_019e17ed-dd93-72ed-8a55-e44bfa9d2253.jsonl"), "utf8"));
const IMAGE_ENTRY = "69e2aabe";
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

/** A session of `turns` question/answer pairs, and the lines that continue it by `count` more pairs each time. */
function growingSession(id: string, turns: number): { text: string; more: (count: number) => string } {
  const t = "2026-02-01T12:00:00.000Z";
  let n = 0;
  let parent: string | null = null;
  const pair = () => {
    const q = `q${n}`;
    const a = `a${n}`;
    const records = [
      { type: "message", id: q, parentId: parent, timestamp: t, message: { role: "user", content: `Question ${n}: what does step ${n} of the migration change?`, timestamp: 1 } },
      {
        type: "message",
        id: a,
        parentId: q,
        timestamp: t,
        message: {
          role: "assistant",
          content: [{ type: "text", text: `Step ${n} moves the \`orders\` table to the new schema.\n\n\`\`\`sql\nALTER TABLE orders ADD COLUMN step_${n} integer;\n\`\`\`\n\nThe old column stays until step ${n + 1}.` }],
          provider: "anthropic",
          model: "claude-sonnet-4-5",
          api: "anthropic-messages",
          stopReason: "stop",
          usage: { input: 1200, output: 180, cacheRead: 0, cacheWrite: 0, totalTokens: 1380, cost: { input: 0.0036, output: 0.0027, cacheRead: 0, cacheWrite: 0, total: 0.0063 } },
          timestamp: 2,
        },
      },
    ];
    parent = a;
    n++;
    return records;
  };
  const lines = (records: unknown[]) => records.map((r) => JSON.stringify(r)).join("\n") + "\n";
  const head = [{ type: "session", version: 3, id, timestamp: t, cwd: "/home/demo/shop" }, ...Array.from({ length: turns }, pair).flat()];
  return { text: lines(head), more: (count) => lines(Array.from({ length: count }, pair).flat()) };
}

async function searchAll(page: Page, query: string): Promise<void> {
  await page.fill("#global-search", query);
  await page.press("#global-search", "Enter");
  await page.waitForFunction(() => document.body.dataset.status === "ready" && document.querySelector("#global-results .list-count"), null, { timeout: 300_000 });
}

try {
  for (const scheme of ["light", "dark"] as const) {
    // Wide enough (1500 px and more) for the list beside the session.
    const page = await browser.newPage({ viewport: { width: 1600, height: 900 }, colorScheme: scheme });
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

  const sizes = { wide: { width: 1280, height: 900 }, phone: { width: 390, height: 844 } } as const;
  for (const scheme of ["light", "dark"] as const) {
    for (const [size, viewport] of Object.entries(sizes)) {
      const page = await browser.newPage({ viewport, colorScheme: scheme });
      // A session with images: one of them in view, at its natural size.
      await page.goto(link(imagesPath, `&target=${IMAGE_ENTRY}`));
      await ready(page);
      await page.waitForFunction(() => [...document.querySelectorAll<HTMLImageElement>("#messages img")].every((img) => img.complete && img.naturalWidth > 0));
      await page.screenshot({ path: join(out, `images-${size}-${scheme}.png`) });
      if (size === "wide" && scheme === "dark") {
        await page.locator("#messages .entry.target .image-zoom").first().click();
        await page.waitForTimeout(300);
        await page.screenshot({ path: join(out, "image-zoom-dark.png") });
      }

      // The tree of the branched sample, on the branch that is not the file's: its path shaded, its leaf marked.
      await page.goto(link(samplePath));
      await ready(page);
      if (size === "phone") await page.click("#menu");
      await page.locator("#tree .tree-node", { hasText: "Add a test for the day daylight" }).click();
      if (size === "phone") await page.click("#menu");
      await page.waitForTimeout(400);
      await page.screenshot({ path: join(out, `tree-${size}-${scheme}.png`) });

      // A session growing while it is shown: followed at the bottom, then counted by the chip once scrolled up.
      const growing = growingSession(`0199aa00-0000-7000-8000-${scheme === "light" ? "1" : "2"}${size === "wide" ? "1" : "2"}0000000000`, 10);
      const growingPath = await putSession(piRoot, growing.text);
      await page.goto(link(growingPath));
      await ready(page);
      await appendFile(join(piRoot, growingPath), growing.more(2));
      await page.waitForFunction(() => [...document.querySelectorAll("#messages .entry")].some((entry) => entry.textContent?.includes("Question 11:")));
      await page.waitForTimeout(400);
      await page.locator("#messages").evaluate((m) => m.scrollBy(0, -260));
      await page.waitForTimeout(200);
      await appendFile(join(piRoot, growingPath), growing.more(3));
      await page.waitForSelector("#follow-bar .new-chip");
      await page.waitForTimeout(300);
      await page.screenshot({ path: join(out, `live-${size}-${scheme}.png`) });
      await page.close();
    }
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
