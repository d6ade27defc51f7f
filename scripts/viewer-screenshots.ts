/**
 * Screenshots of the viewer for the README (docs/screenshots/): the built app served by vite
 * preview (the bundled sample, light and dark, a narrow screen with the tree open) and an HTML
 * export of the 100,000-entry bench session when bench/.data has it (npm run bench:browser
 * writes it).
 *
 *   npx vite build web-demo && npx tsx scripts/viewer-screenshots.ts
 */
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { chromium, type Page } from "playwright";
import { preview } from "vite";
import { chromiumArgs, chromiumExecutable } from "../chromium.config.js";

const project = fileURLToPath(new URL("..", import.meta.url));
const out = join(project, "docs", "screenshots");
await mkdir(out, { recursive: true });

const server = await preview({ configFile: join(project, "web-demo", "vite.config.ts"), preview: { host: "127.0.0.1", port: 0, open: false }, logLevel: "warn" });
const url = server.resolvedUrls!.local[0]!;
const browser = await chromium.launch({ executablePath: chromiumExecutable, args: chromiumArgs, headless: true });

async function ready(page: Page): Promise<void> {
  await page.waitForFunction(() => document.body.dataset.status === "ready" && document.querySelector("#messages .entry"), null, { timeout: 120_000 });
  await page.waitForTimeout(600); // images and highlighting arrive
}

try {
  for (const scheme of ["light", "dark"] as const) {
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 }, colorScheme: scheme });
    await page.goto(url);
    await ready(page);
    await page.screenshot({ path: join(out, `app-${scheme}.png`) });
    if (scheme === "dark") {
      // The other branch, tools and thinking: the first turns of the sample.
      await page.locator("#tree .tree-node", { hasText: "A test that fails only" }).click();
      await page.keyboard.press("o");
      await page.waitForTimeout(400);
      await page.screenshot({ path: join(out, "tools-dark.png") });
    } else {
      await page.click('.filter-btn[data-filter="all"]');
      await page.fill("#tree-search", "readme");
      await page.waitForTimeout(400);
      await page.screenshot({ path: join(out, "search-light.png") });
    }
    await page.close();
  }
  const narrow = await browser.newPage({ viewport: { width: 420, height: 860 }, colorScheme: "light" });
  await narrow.goto(url);
  await ready(narrow);
  await narrow.screenshot({ path: join(out, "narrow.png") });
  await narrow.click("#menu");
  await narrow.waitForTimeout(300);
  await narrow.screenshot({ path: join(out, "narrow-tree.png") });
  await narrow.close();

  const huge = join(project, "bench", ".data", "viewer", "build", "ours-100000.html");
  if (existsSync(huge)) {
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 }, colorScheme: "dark" });
    await page.goto(pathToFileURL(huge).href, { timeout: 300_000 });
    await ready(page);
    await page.screenshot({ path: join(out, "export-100k-dark.png") });
    await page.close();
  }
} finally {
  await browser.close();
  await new Promise<void>((resolve) => server.httpServer.close(() => resolve()));
}
process.stdout.write(`screenshots in ${out}\n`);
