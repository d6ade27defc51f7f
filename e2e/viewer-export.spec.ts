/**
 * The self-contained HTML export opened from file:// with the network blocked (every request
 * other than file:, blob: and data: aborted and recorded): made by the CLI from a store with
 * blobs, and by the viewer's "Export HTML" button. The same views as the app: header, filters,
 * images, search, a deep link surviving a reload.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { expect, test, type Browser, type Page } from "@playwright/test";
import { SAMPLE_TITLE, entries, openViewer, settled, treeRow } from "./viewer-helpers.js";

const run = promisify(execFile);
let tempDir: string;

test.beforeAll(async () => {
  tempDir = await mkdtemp(join(tmpdir(), "sessionkit-export-e2e-"));
});

test.afterAll(async () => {
  await rm(tempDir, { recursive: true, force: true });
});

/** A page with no network: anything but file:, blob: and data: is aborted and recorded. */
async function offlinePage(browser: Browser): Promise<{ page: Page; requests: string[]; close: () => Promise<void> }> {
  const context = await browser.newContext();
  const requests: string[] = [];
  await context.route(/^(?!file:|blob:|data:)/, (route) => {
    requests.push(route.request().url());
    return route.abort();
  });
  return { page: await context.newPage(), requests, close: () => context.close() };
}

async function checkExportedSample(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await settled(page);
  await expect(page.locator("#session-header h1")).toHaveText(SAMPLE_TITLE);
  await expect(page.locator('#session-header [data-field="tokens"] .info-value')).toHaveText("↑9.6k ↓1.4k");
  await expect(page.locator("#tree-status")).toHaveText("19 / 27 entries");
  const image = page.locator("#messages .tool-images img");
  await expect.poll(() => image.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(64);
  await page.click('.filter-btn[data-filter="user-only"]');
  await expect(page.locator("#tree-status")).toHaveText("4 / 27 entries");
  await page.click('.filter-btn[data-filter="default"]');
  await treeRow(page, "Add a test for the day daylight").click();
  await expect(entries(page).last()).toContainText("Added due-date.dst.test.ts");
  await page.reload();
  await settled(page);
  await expect(entries(page).last()).toContainText("Added due-date.dst.test.ts");
  await expect(page.locator("#messages .entry.target")).toContainText("Add a test for the day daylight saving");
  await page.fill("#tree-search", "readme timezone");
  await expect(page.locator("#tree-status")).toHaveText("2 / 27 entries");
}

test("the CLI's export of a stored session (images as blobs) opens from file:// offline with every view", async ({ browser }) => {
  const root = join(tempDir, "store");
  await run("npx", ["tsx", "cli/main.ts", "--root", root, "import", "web-demo/src/samples/pi-sample.jsonl"]);
  const out = join(tempDir, "cli.html");
  await run("npx", ["tsx", "cli/main.ts", "--root", root, "export", "--html", "01a1fdb6", "-o", out]);
  const { page, requests, close } = await offlinePage(browser);
  await checkExportedSample(page, pathToFileURL(out).href);
  expect(requests).toEqual([]);
  await close();
});

test("the viewer's Export HTML button makes the same file", async ({ page, browser }) => {
  await openViewer(page);
  const [download] = await Promise.all([page.waitForEvent("download"), page.click("#action-export-html")]);
  expect(download.suggestedFilename()).toMatch(/^session-.*\.html$/);
  const out = join(tempDir, "button.html");
  await download.saveAs(out);
  const offline = await offlinePage(browser);
  await checkExportedSample(offline.page, pathToFileURL(out).href);
  expect(offline.requests).toEqual([]);
  await offline.close();
});
