/**
 * The built session viewer (web-demo/dist, served by `vite preview` on the port playwright.config.ts
 * chose) in Chromium, over the browser's own store: the bundled sample on first load, every view
 * (header figures, tree, filters, search in a session and across sessions, deep links surviving a
 * reload, keys, theme, narrow layout), import by picker and drop, downloads (JSONL, zip), delete,
 * persistence, OPFS, and following a session another tab extends. Each test gets a fresh browser
 * context, so every test starts with empty storage.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test, type Page } from "@playwright/test";
import { SAMPLE_TITLE, VIEWER_URL, checkDeepLinks, checkFiltersAndSearch, checkSampleSession, entries, openViewer, readZip, sessionItems, sessionJsonl, settled, showSessionList, treeRow } from "./viewer-helpers.js";

let tempDir: string;

test.beforeAll(async () => {
  tempDir = await mkdtemp(join(tmpdir(), "sessionkit-viewer-e2e-"));
});

test.afterAll(async () => {
  await rm(tempDir, { recursive: true, force: true });
});

async function writeSessionFile(name: string, id: string, turns: [string, string][]): Promise<string> {
  const path = join(tempDir, name);
  await writeFile(path, sessionJsonl(id, turns));
  return path;
}

const field = (page: Page, name: string) => page.locator(`#session-header [data-field="${name}"] .info-value`);

test("the bundled sample: list, header figures over all branches, tree with labels, the leaf's branch with a decoded image", async ({ page }) => {
  await openViewer(page);
  await expect(sessionItems(page)).toHaveCount(1);
  await expect(sessionItems(page).first()).toContainText(SAMPLE_TITLE);
  await checkSampleSession(page);
  // Imported into the browser's store: its images became blobs, shown through blob: URLs.
  await expect(page.locator("#messages .tool-images img")).toHaveAttribute("src", /^blob:/);
});

test("every filter, with N / M entries; search in the session; Esc clears it and goes back to the leaf", async ({ page }) => {
  await openViewer(page);
  await checkFiltersAndSearch(page);
});

test("a tree entry opens its newest leaf; the link survives a reload; copy-link puts the entry in the address", async ({ page }) => {
  await openViewer(page);
  await checkDeepLinks(page);
});

test("keys: t folds thinking, o expands outputs, arrows move in the tree and fold, Enter opens, ? lists the keys", async ({ page }) => {
  await openViewer(page);
  await treeRow(page, "A test that fails only").click();
  const thinking = page.locator("#messages .thinking").first();
  await expect(thinking).toContainText("Fails only in the evening");
  await page.keyboard.press("t");
  await expect(thinking).toHaveText("Thinking ...");
  await page.keyboard.press("t");
  await expect(thinking).toContainText("Fails only in the evening");

  const bashOutput = page.locator("#messages .tool-execution[data-tool='bash'] .tool-output");
  await expect(bashOutput.locator(".expand-hint")).toHaveText("... (2 more lines)");
  await page.keyboard.press("o");
  await expect(bashOutput.locator("code")).toContainText("Tests: 1 failed");
  await page.keyboard.press("o");
  await expect(bashOutput.locator(".expand-hint")).toHaveText("... (2 more lines)");
  await bashOutput.locator(".expand-hint").click();
  await expect(bashOutput.locator("code")).toContainText("Tests: 1 failed");

  await page.locator("#tree").focus();
  const cursor = page.locator("#tree .tree-node.cursor");
  await page.keyboard.press("Home");
  await expect(cursor).toContainText("user: The due-date test fails");
  await page.keyboard.press("ArrowDown");
  await expect(cursor).toContainText("assistant: A test that fails only");
  await page.keyboard.press("End");
  await page.keyboard.press("ArrowUp");
  await page.keyboard.press("Enter");
  await expect(page.locator("#messages .entry.target")).toBeVisible();
  // Fold the branch point: its branches leave the tree.
  const point = page.locator('#tree .tree-node[aria-expanded]', { hasText: "branch summary" });
  await point.click({ position: { x: 3, y: 3 } }).catch(() => undefined);
  await page.locator("#tree").focus();
  const before = await page.locator("#tree .tree-node").count();
  await page.locator("#tree .tree-node", { hasText: "[branch summary]" }).locator(".fold").click();
  await expect(page.locator("#tree .tree-node", { hasText: "[branch summary]" })).toHaveAttribute("aria-expanded", "false");
  await expect.poll(() => page.locator("#tree .tree-node").count()).toBeLessThan(before);
  await expect(page.locator("#tree .fold-count")).toHaveText(" +7");

  await page.keyboard.press("?");
  await expect(page.locator("#keys-dialog")).toContainText("next / previous user turn");
  await page.keyboard.press("Escape");
  await expect(page.locator("#keys-dialog")).toHaveCount(0);
});

test("images zoom on click; the theme switch is remembered; a narrow screen gets the tree as an overlay", async ({ page }) => {
  await openViewer(page);
  await page.locator("#messages .tool-images img").click();
  await expect(page.locator("#image-modal img")).toBeVisible();
  await page.keyboard.press("Escape");
  await expect(page.locator("#image-modal")).toHaveCount(0);

  await page.click("#theme"); // system → light
  await page.click("#theme"); // light → dark
  await expect(page.locator("html")).toHaveAttribute("data-theme", "dark");
  await page.reload();
  await settled(page);
  await expect(page.locator("html")).toHaveAttribute("data-theme", "dark");
  const background = await page.locator("body").evaluate((b) => getComputedStyle(b).backgroundColor);
  expect(background).toBe("rgb(22, 24, 29)");

  await page.setViewportSize({ width: 600, height: 800 });
  await page.reload();
  await settled(page);
  await expect(page.locator("#list-pane")).toBeHidden();
  await expect(page.locator("#sidebar")).not.toBeInViewport();
  await page.click("#menu");
  await expect(page.locator("#sidebar")).toBeInViewport();
  await treeRow(page, "Add a test for the day daylight").click();
  await expect(page.locator("#sidebar")).not.toBeInViewport();
  await expect(entries(page).last()).toContainText("Added due-date.dst.test.ts");
});

test("downloads: JSONL of the session and of the branch (images inline again), zip of the session and of the branch", async ({ page }) => {
  await openViewer(page);
  const sessionId = await field(page, "id").innerText();
  const [jsonl] = await Promise.all([page.waitForEvent("download"), page.click("#action-jsonl")]);
  const lines = (await readFile(await jsonl.path(), "utf8")).trim().split("\n").map((l) => JSON.parse(l));
  expect(lines[0]).toMatchObject({ type: "session", id: sessionId });
  expect(lines).toHaveLength(28);
  expect(JSON.stringify(lines)).not.toContain("blob:sha256:");

  await treeRow(page, "Add a test for the day daylight").click();
  const [branch] = await Promise.all([page.waitForEvent("download"), page.click("#action-jsonl-branch")]);
  const branchLines = (await readFile(await branch.path(), "utf8")).trim().split("\n");
  expect(branchLines.join("\n")).toContain("due-date.dst.test.ts");
  expect(branchLines.join("\n")).not.toContain("The README now says");

  const [zip] = await Promise.all([page.waitForEvent("download"), page.click("#action-export-zip")]);
  expect(zip.suggestedFilename()).toBe(`session-${sessionId}.zip`);
  const members = await readZip(await zip.path());
  const manifest = JSON.parse(members.get("manifest.json")!);
  expect(manifest.sessions.map((s: { id: string }) => s.id)).toEqual([sessionId]);
  expect(manifest.blobs).toHaveLength(2);

  const [branchZip] = await Promise.all([page.waitForEvent("download"), page.click("#action-export-branch-zip")]);
  const branchMembers = await readZip(await branchZip.path());
  const branchManifest = JSON.parse(branchMembers.get("manifest.json")!);
  expect(branchManifest.sessions[0].leafId).toBe(new URL(page.url()).hash.match(/leaf=([^&]+)/)![1]);
  expect(branchManifest.blobs).toHaveLength(1);
});

test("import by picker and by drop; a broken archive shows its ArchiveError; the list filters as you type; search across sessions opens the hit", async ({ page }) => {
  await openViewer(page);
  const file = await writeSessionFile("picked.jsonl", "e2e-picked-session", [["How do I rotate the logs?", "Use logrotate with a daily rule."]]);
  await page.setInputFiles("#import-input", file);
  await settled(page);
  await expect(page.locator(".import-report li[data-action]")).toHaveText([/created e2e-picked-session/]);
  await showSessionList(page);
  await expect(sessionItems(page)).toHaveCount(2);
  await expect(page.locator("#session-list li.selected")).toContainText("How do I rotate the logs?");
  await expect(entries(page).last()).toContainText("Use logrotate with a daily rule.");

  const drop = async (files: { name: string; text: string }[]) => {
    await page.evaluate((files) => {
      const transfer = new DataTransfer();
      for (const f of files) transfer.items.add(new File([f.text], f.name));
      window.dispatchEvent(new DragEvent("drop", { dataTransfer: transfer, bubbles: true, cancelable: true }));
    }, files);
    await settled(page);
  };
  await drop([{ name: "broken.zip", text: "this is not a zip file" }]);
  const failure = page.locator(".import-unit.failed");
  await expect(failure.locator("h3")).toHaveText("broken.zip");
  await expect(failure.locator('[data-field="code"] dd')).toHaveText("not-a-zip");
  await drop([{ name: "dropped.jsonl", text: sessionJsonl("e2e-dropped-session", [["Dropped question", "Dropped answer about zebras"]]) }]);
  await expect(sessionItems(page)).toHaveCount(3);

  await showSessionList(page);
  await page.fill("#session-filter", "rotate logs");
  await expect(sessionItems(page)).toHaveCount(1);
  await expect(page.locator(".list-count")).toHaveText("1 of 3 sessions");
  await page.fill("#session-filter", "");

  // The first search builds the index: what it reads is told as it goes.
  await page.evaluate(() => {
    const results = document.querySelector("#global-results")!;
    const seen: string[] = [];
    (window as unknown as { searchStatus: string[] }).searchStatus = seen;
    new MutationObserver(() => seen.push(results.textContent ?? "")).observe(results, { childList: true, subtree: true, characterData: true });
  });
  await page.fill("#global-search", "zebras");
  await page.press("#global-search", "Enter");
  await settled(page);
  expect(await page.evaluate(() => (window as unknown as { searchStatus: string[] }).searchStatus)).toContainEqual(expect.stringMatching(/^Indexing 0 \/ 3 changed sessions \(0 B of [\d.]+ KB\)…$/));
  const hits = page.locator("#global-results .search-hit");
  await expect(hits).toHaveCount(1);
  await expect(hits).toContainText("Dropped answer about zebras");
  await hits.locator("button").click();
  await settled(page);
  await expect(page.locator("#messages .entry.target")).toContainText("Dropped answer about zebras");
  // Tool output is left out unless asked for.
  await showSessionList(page);
  await page.fill("#global-search", "Tests: 1 failed");
  await page.press("#global-search", "Enter");
  await settled(page);
  await expect(hits).toHaveCount(0);
  await page.check("#global-include-tools");
  await page.press("#global-search", "Enter");
  await settled(page);
  await expect(hits).toHaveCount(1);
});

test("search across sessions shows the 200 best hits, and says so when more match", async ({ page }) => {
  await openViewer(page);
  // 200 entries say both words; one more question says "quagga" alone.
  const turns: [string, string][] = Array.from({ length: 100 }, (_, i) => [`quagga okapi question ${i}`, `quagga okapi answer ${i}`]);
  turns.push(["quagga alone", "an answer without the word"]);
  await page.setInputFiles("#import-input", await writeSessionFile("many-hits.jsonl", "e2e-many-hits", turns));
  await settled(page);
  await showSessionList(page);
  const count = page.locator("#global-results .list-count");
  const hits = page.locator("#global-results .search-hit");
  for (const [query, said] of [
    ["quagga", "The 200 best hits (more match) for “quagga”"],
    ["okapi", "200 hits for “okapi”"],
  ]) {
    await page.fill("#global-search", query!);
    await page.press("#global-search", "Enter");
    await settled(page);
    await expect(count).toHaveText(said!);
    await expect(hits).toHaveCount(200);
  }
});

test("following: entries another tab adds to the session show up; scrolling up pauses, the chip resumes", async ({ page, context }) => {
  await openViewer(page);
  const turns: [string, string][] = Array.from({ length: 12 }, (_, i) => [`question ${i}`, `answer ${i}\n\n${"long line of text\n".repeat(6)}`]);
  const file = await writeSessionFile("follow.jsonl", "e2e-follow-session", turns.slice(0, 10));
  await page.setInputFiles("#import-input", file);
  await settled(page);
  await page.click("#action-follow");
  await expect(page.locator("#action-follow")).toHaveAttribute("aria-pressed", "true");

  // Another tab of the same browser imports a longer copy: the stored session is extended.
  const other = await context.newPage();
  await openViewer(other);
  await other.setInputFiles("#import-input", await writeSessionFile("follow-more.jsonl", "e2e-follow-session", turns.slice(0, 11)));
  await settled(other);
  await expect(entries(page).last()).toContainText("answer 10");
  await expect(page.locator("#messages")).toHaveJSProperty("scrollTop", await page.locator("#messages").evaluate((m) => m.scrollHeight - m.clientHeight));

  await page.locator("#messages").evaluate((m) => m.scrollBy(0, -400));
  await page.locator("#messages").dispatchEvent("scroll");
  await other.setInputFiles("#import-input", await writeSessionFile("follow-more2.jsonl", "e2e-follow-session", turns));
  await settled(other);
  const bar = page.locator("#follow-bar");
  await expect(bar.locator("button")).toHaveText("↓ 2 new");
  await bar.locator("button").click();
  await expect(entries(page).last()).toContainText("answer 11");
  await expect(entries(page).last()).toBeInViewport();
});

test("sessions persist across a reload, and a deleted one stays deleted", async ({ page }) => {
  await openViewer(page);
  await page.setInputFiles("#import-input", await writeSessionFile("persist.jsonl", "e2e-persist-session", [["Will this survive?", "It will."]]));
  await settled(page);
  await page.reload();
  await settled(page);
  await expect(sessionItems(page)).toHaveCount(2);
  await showSessionList(page);
  await page.locator("#session-list button", { hasText: "Will this survive?" }).click();
  await settled(page);
  await expect(entries(page).last()).toContainText("It will.");
  page.once("dialog", (dialog) => void dialog.accept());
  await page.click("#action-delete");
  await settled(page);
  await expect(page.locator("#notices")).toContainText("Deleted “Will this survive?”");
  await expect(sessionItems(page)).toHaveCount(1);
  await page.reload();
  await settled(page);
  await expect(sessionItems(page)).toHaveText([new RegExp(SAMPLE_TITLE)]);
});

test("OPFS can be chosen: it has its own store, and the choice survives a reload", async ({ page }) => {
  await openViewer(page);
  await page.selectOption("#backend", "opfs");
  await settled(page);
  await expect(sessionItems(page)).toHaveCount(1);
  await expect(page.locator("#messages .tool-images img")).toHaveAttribute("src", /^blob:/);
  await page.setInputFiles("#import-input", await writeSessionFile("opfs.jsonl", "e2e-opfs-session", [["Stored in OPFS?", "Yes, in the origin private file system."]]));
  await settled(page);
  await page.reload();
  await settled(page);
  await expect(page.locator("#backend")).toHaveValue("opfs");
  await expect(sessionItems(page)).toHaveCount(2);
  await page.selectOption("#backend", "indexeddb");
  await settled(page);
  await expect(sessionItems(page)).toHaveText([new RegExp(SAMPLE_TITLE)]);
  expect(VIEWER_URL).toContain("127.0.0.1");
});
