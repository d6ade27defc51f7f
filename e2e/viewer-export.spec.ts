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
import { expect, test } from "@playwright/test";
import { checkExportedSample, offlinePage, openViewer } from "./viewer-helpers.js";

const run = promisify(execFile);
let tempDir: string;

test.beforeAll(async () => {
  tempDir = await mkdtemp(join(tmpdir(), "sessionkit-export-e2e-"));
});

test.afterAll(async () => {
  await rm(tempDir, { recursive: true, force: true });
});

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
