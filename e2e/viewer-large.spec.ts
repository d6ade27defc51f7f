/**
 * A session file too large to wait for, served by `sessionkit serve` (startServe, in process):
 * copies of the viewer bench's 1,000-entry pi session make ~40 MB, fetched at 8 MiB/s (CDP
 * network emulation) so the reading takes seconds. The click shows the end of the file at once
 * (the leaf's messages, no tree, the header without its figures, how far the reading is), and the
 * whole session replaces it at the place the reader scrolled to.
 */
import { mkdir, mkdtemp, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test, type Page } from "@playwright/test";
import { startServe, type RunningServer } from "../cli/serve/server.js";
import { writeRepeatedSession, type RepeatedSession } from "../test/shared/repeated-session.js";
import { ensureViewerSession } from "../test/shared/viewer-session.js";
import { settled } from "./viewer-helpers.js";

let work: string;
let server: RunningServer;
let big: RepeatedSession;

test.beforeAll(async () => {
  test.setTimeout(300_000);
  work = await mkdtemp(join(tmpdir(), "sessionkit-viewer-large-"));
  const dir = join(work, "store", "sessions", "--large--");
  await mkdir(dir, { recursive: true });
  big = writeRepeatedSession(ensureViewerSession(1_000).path, join(dir, "large.jsonl"), { bytes: 40 << 20 }, "/e2e/large");
  // A newer small session: the viewer opens it first, the large one is clicked.
  const newest = "2100-01-01T00:00:00.000Z";
  const small = join(dir, "small.jsonl");
  await writeFile(small, `${JSON.stringify({ type: "session", version: 3, id: "small", timestamp: newest, cwd: "/e2e/large" })}\n${JSON.stringify({ type: "message", id: "s1", parentId: null, timestamp: newest, message: { role: "user", content: "small", timestamp: Date.parse(newest) } })}\n`);
  await utimes(small, new Date(newest), new Date(newest));
  server = await startServe({ stores: [{ root: join(work, "store"), cacheDir: join(work, "cache") }], viewerDir: "web-demo/dist", port: 0 });
});

test.afterAll(async () => {
  await server?.close();
  await rm(work, { recursive: true, force: true });
});

/** The id of the first message entry below the header's line. */
function entryAtTop(page: Page): Promise<string> {
  return page.evaluate(() => {
    const messages = document.querySelector("#messages")!;
    const top = messages.getBoundingClientRect().top + document.querySelector(".header-bar")!.getBoundingClientRect().height;
    return [...messages.querySelectorAll<HTMLElement>(".entry")].find((entry) => entry.getBoundingClientRect().bottom > top + 8)!.dataset.entryId!;
  });
}

test("a session file over 32 MiB shows its end at once, then the whole session where the reader scrolled to", async ({ page }) => {
  test.setTimeout(120_000);
  await page.setViewportSize({ width: 1600, height: 900 });
  await page.goto(server.url);
  await settled(page);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Network.enable");
  await cdp.send("Network.emulateNetworkConditions", { offline: false, latency: 0, downloadThroughput: 8 << 20, uploadThroughput: -1 });

  await page.locator('#session-list [data-path$="large.jsonl"]').click();
  const leaf = page.locator(`#messages .entry[data-entry-id="${big.shownLeafId}"]`);
  await expect(leaf).toBeInViewport({ timeout: 3_000 });
  await expect(page.locator("#sidebar.sidebar-reading")).toContainText("Reading the whole session");
  await expect(page.locator('#session-header [data-field="messages"] .info-value')).toHaveText("counted once the whole session is read");
  await expect(page.locator("#tree")).toHaveCount(0);

  // The reader scrolls up while the rest arrives; the whole session keeps that place.
  await page.locator("#messages").evaluate((messages) => (messages.scrollTop -= 3000));
  await page.waitForTimeout(300);
  const reading = await entryAtTop(page);
  expect(reading).not.toBe(big.shownLeafId);
  await expect(page.locator(`#tree .tree-node[data-entry-id="${big.leafId}"]`)).toBeAttached({ timeout: 60_000 });
  await expect(page.locator(`#messages .entry[data-entry-id="${reading}"]`)).toBeInViewport();
  await expect(page.locator('#session-header [data-field="entries"] .info-value')).toHaveText(big.entries.toLocaleString("en-US"));
  await expect(page.locator("#tree-status")).toContainText(`/ ${big.entries.toLocaleString("en-US")} entries`);
  await settled(page);
});
