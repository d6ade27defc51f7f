/**
 * Screenshots of the API reference for docs/screenshots/: its index page and the application
 * API's module page, 1280×900, opened from file:// as `npm run docs` writes them.
 *
 *   npm run docs && npx tsx scripts/api-reference-screenshots.ts
 */
import { access } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { chromium } from "playwright";
import { chromiumArgs, chromiumExecutable } from "../chromium.config.js";

const project = fileURLToPath(new URL("..", import.meta.url));
const api = join(project, "docs", "reference");
const pages = [
  { page: "index.html", file: "api-reference-index.png" },
  { page: "modules/sessionkit.html", file: "api-reference-sessionkit.png" },
];
await access(join(api, "index.html")).catch(() => {
  throw new Error("docs/reference/index.html is missing: run `npm run docs` first");
});

const browser = await chromium.launch({ executablePath: chromiumExecutable, args: chromiumArgs, headless: true });
try {
  const tab = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  for (const { page, file } of pages) {
    await tab.goto(pathToFileURL(join(api, page)).href);
    // The sidebar is filled in by the page's script from its navigation data.
    await tab.locator(".tsd-navigation a").first().waitFor();
    await tab.screenshot({ path: join(project, "docs", "screenshots", file) });
    process.stdout.write(`docs/screenshots/${file}\n`);
  }
} finally {
  await browser.close();
}
