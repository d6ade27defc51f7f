/**
 * Screenshots of the viewer's insights (docs/screenshots/insights-*.png), in serve mode as
 * `npm start` runs it: `sessionkit serve` (in this process) over two agent stores in a temp dir
 * holding the corpus's real sessions (pi: the pi-mono ones and a few more; oh-my-pi: the rest),
 * so the tables have several days, models, projects and agents. One session (pi-mono's
 * compact.jsonl: two compactions) and the whole store, light and dark, 1440×900 and 390×844.
 *
 *   npx vite build web-demo && npx tsx scripts/insights-screenshots.ts
 */
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Page } from "playwright";
import { startServe } from "../cli/serve/server.js";
import { sessionDirFor, sessionFileName } from "../src/session/paths.js";
import { chromiumArgs, chromiumExecutable } from "../chromium.config.js";

const project = fileURLToPath(new URL("..", import.meta.url));
const corpus = join(project, "test", "fixtures", "corpus");
const out = join(project, "docs", "screenshots");
await mkdir(out, { recursive: true });
const temp = await mkdtemp(join(tmpdir(), "sessionkit-insights-shots-"));

/** Copies a corpus file where its agent keeps it; returns its storage path. */
async function putSession(root: string, file: string): Promise<string> {
  const text = await readFile(file, "utf8");
  const header = JSON.parse(text.slice(0, text.indexOf("\n"))) as { id: string; timestamp: string; cwd?: string };
  const dir = sessionDirFor(header.cwd ?? "/");
  const path = `${dir}/${sessionFileName(header.timestamp, header.id)}`;
  await mkdir(join(root, dir), { recursive: true });
  await copyFile(file, join(root, path));
  return path;
}

const piRoot = join(temp, "pi-agent");
const ompRoot = join(temp, "omp-agent");
let sessionPath = "";
for (const owner of await readdir(corpus, { withFileTypes: true })) {
  if (!owner.isDirectory()) continue;
  const toPi = ["badlogic__pi-mono", "hassanad94__dotfiles", "castai__kimchi-dev"].includes(owner.name);
  for (const name of await readdir(join(corpus, owner.name))) {
    if (!name.endsWith(".jsonl")) continue;
    const path = await putSession(toPi ? piRoot : ompRoot, join(corpus, owner.name, name));
    if (owner.name === "badlogic__pi-mono" && name === "compact.jsonl") sessionPath = path;
  }
}

const server = await startServe({
  stores: [
    { root: piRoot, label: "pi ~/.pi/agent", agent: "pi", cacheDir: join(temp, "cache-pi") },
    { root: ompRoot, label: "omp ~/.omp/agent", agent: "omp", cacheDir: join(temp, "cache-omp") },
  ],
  port: 0,
  viewerDir: join(project, "web-demo", "dist"),
});
const piStore = server.stores[0]!.id;
const browser = await chromium.launch({ executablePath: chromiumExecutable, args: chromiumArgs, headless: true });

async function insightsReady(page: Page): Promise<void> {
  await page.waitForFunction(() => document.body.dataset.status === "ready" && document.querySelector("#insights #insights-totals"), null, { timeout: 300_000 });
  await page.waitForFunction(() => [...document.querySelectorAll("#insights .chart-canvas")].every((box) => box.querySelector("canvas")), null, { timeout: 60_000 });
  await page.waitForTimeout(300);
}

try {
  for (const [size, viewport] of [
    ["wide", { width: 1440, height: 900 }],
    ["phone", { width: 390, height: 844 }],
  ] as const) {
    for (const scheme of ["light", "dark"] as const) {
      const page = await browser.newPage({ viewport, colorScheme: scheme, ...(size === "phone" ? { deviceScaleFactor: 2, isMobile: true, hasTouch: true } : {}) });
      await page.goto(`${server.url}#insights=session&store=${piStore}&session=${encodeURIComponent(sessionPath)}`);
      await insightsReady(page);
      await page.screenshot({ path: join(out, `insights-session-${size}-${scheme}.png`) });
      await page.click('#insights [data-scope="store"]');
      await page.waitForFunction(() => document.querySelector("#insights")?.getAttribute("data-scope") === "store", null, { timeout: 60_000 });
      await insightsReady(page);
      await page.screenshot({ path: join(out, `insights-store-${size}-${scheme}.png`) });
      await page.close();
    }
  }
} finally {
  await browser.close();
  await server.close();
  await rm(temp, { recursive: true, force: true });
}
process.stdout.write(`screenshots in ${out}\n`);
