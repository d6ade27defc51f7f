/**
 * The built session viewer (web-demo/dist, served by `vite preview` on the port playwright.config.ts chose) in
 * Chromium: the bundled sample on first load, import by file input and by drop, export as a zip,
 * viewing another branch from the tree, delete, persistence over a reload, and the OPFS store.
 * Each test gets a fresh browser context, so every test starts with empty storage.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TextWriter, Uint8ArrayReader, ZipReader } from "@zip.js/zip.js";
import { expect, test, type Page } from "@playwright/test";

const VIEWER_URL = `http://127.0.0.1:${process.env.SESSIONKIT_E2E_VIEWER_PORT}/`;
const SAMPLE_TITLE = "Flaky due-date test";

let tempDir: string;

test.beforeAll(async () => {
  tempDir = await mkdtemp(join(tmpdir(), "sessionkit-viewer-e2e-"));
});

test.afterAll(async () => {
  await rm(tempDir, { recursive: true, force: true });
});

/** Waits until the viewer has finished what it was doing (loading, importing, switching stores). */
async function settled(page: Page): Promise<void> {
  await expect(page.locator("body")).toHaveAttribute("data-status", "ready");
}

async function openViewer(page: Page): Promise<void> {
  await page.goto(VIEWER_URL);
  await settled(page);
}

/** A small pi session file (v3) with one question and one answer. */
function sessionJsonl(id: string, question: string, answer: string): string {
  const t = "2026-02-01T12:00:00.000Z";
  const records = [
    { type: "session", version: 3, id, timestamp: t, cwd: "/home/e2e/project" },
    { type: "message", id: "q1", parentId: null, timestamp: t, message: { role: "user", content: question, timestamp: 1 } },
    {
      type: "message",
      id: "a1",
      parentId: "q1",
      timestamp: t,
      message: { role: "assistant", content: [{ type: "text", text: answer }], provider: "anthropic", model: "claude-test", api: "anthropic-messages", stopReason: "stop", timestamp: 2 },
    },
  ];
  return records.map((r) => JSON.stringify(r)).join("\n") + "\n";
}

async function writeSessionFile(name: string, id: string, question: string, answer: string): Promise<string> {
  const path = join(tempDir, name);
  await writeFile(path, sessionJsonl(id, question, answer));
  return path;
}

const sessionItems = (page: Page) => page.locator("#session-list li.session");
const contextBox = (page: Page) => page.locator("#context");
const treeRow = (page: Page, text: string) => page.locator("#tree .tree-entry", { hasText: text });

async function readZip(path: string): Promise<Map<string, string>> {
  const reader = new ZipReader(new Uint8ArrayReader(new Uint8Array(await readFile(path))));
  const members = new Map<string, string>();
  for (const entry of await reader.getEntries()) {
    if (!entry.directory) members.set(entry.filename, await entry.getData!(new TextWriter()));
  }
  await reader.close();
  return members;
}

test("the bundled sample shows on first load: the list, its context and a decoded image", async ({ page }) => {
  await openViewer(page);
  await expect(sessionItems(page)).toHaveCount(1);
  await expect(sessionItems(page).first()).toContainText(SAMPLE_TITLE);
  await expect(page.locator("#session-view h2")).toHaveText(SAMPLE_TITLE);
  await expect(page.locator('#session-view [data-field="cwd"] dd')).toHaveText("/home/demo/todo-app");

  const context = contextBox(page);
  await expect(context.locator("article.role-compactionSummary")).toHaveCount(1);
  await expect(context.locator("article.role-branchSummary")).toHaveCount(1);
  await expect(context.locator("article.role-custom")).toHaveCount(1);
  const image = context.locator("article.role-toolResult img");
  await expect(image).toHaveAttribute("src", /^data:image\/png;base64,/);
  // The browser decoded it: the blob round-tripped through the store intact.
  await expect.poll(() => image.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(64);
  await expect(page.locator("#tree .is-leaf .leaf-marker")).toHaveCount(1);
  await expect(page.locator("#tree .label")).toHaveText(["fix applied", "dst attempt"]);
  await expect(page.locator("#storage-estimate")).toContainText("used of");
});

test("a .jsonl picked in the file input is imported, listed and shown", async ({ page }) => {
  await openViewer(page);
  const file = await writeSessionFile("picked.jsonl", "e2e-picked-session", "How do I rotate the logs?", "Use logrotate with a daily rule.");
  await page.setInputFiles("#import-input", file);
  await settled(page);

  await expect(page.locator(".import-report li[data-action]")).toHaveText([/created e2e-picked-session/]);
  await expect(sessionItems(page)).toHaveCount(2);
  await expect(page.locator("#session-list li.selected")).toContainText("How do I rotate the logs?");
  await expect(contextBox(page).locator("article.role-user")).toHaveText(/How do I rotate the logs\?/);
  await expect(contextBox(page).locator("article.role-assistant")).toHaveText(/Use logrotate with a daily rule\./);
});

test("files dropped on the page are imported; a broken archive shows its ArchiveError", async ({ page }) => {
  await openViewer(page);
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
  await expect(failure.locator('[role="alert"] .error-kind')).toHaveText("ArchiveError");
  await expect(failure.locator('[data-field="code"] dd')).toHaveText("not-a-zip");
  await expect(sessionItems(page)).toHaveCount(1);

  await drop([{ name: "dropped.jsonl", text: sessionJsonl("e2e-dropped-session", "Dropped question", "Dropped answer") }]);
  await expect(page.locator(".import-report li[data-action]")).toHaveText([/created e2e-dropped-session/]);
  await expect(sessionItems(page)).toHaveCount(2);
  await expect(contextBox(page)).toContainText("Dropped answer");
});

test("export downloads a zip with a manifest, of the session or of the branch to the chosen entry", async ({ page }) => {
  await openViewer(page);
  const sessionId = await page.locator('#session-view [data-field="id"] dd').innerText();

  const [download] = await Promise.all([page.waitForEvent("download"), page.click("#export-session")]);
  expect(download.suggestedFilename()).toBe(`session-${sessionId}.zip`);
  const members = await readZip(await download.path());
  const manifest = JSON.parse(members.get("manifest.json")!);
  expect(manifest.format).toBe("sessionkit-archive");
  expect(manifest.sessions.map((s: { id: string }) => s.id)).toEqual([sessionId]);
  expect(members.has(`sessions/${sessionId}.jsonl`)).toBe(true);
  expect(manifest.blobs).toHaveLength(2);
  for (const blob of manifest.blobs) expect(members.has(`blobs/${blob.hash}`)).toBe(true);

  const dstAnswer = treeRow(page, "assistant: Added `due-date.dst");
  const dstAnswerId = await dstAnswer.getAttribute("data-entry-id");
  await dstAnswer.click();
  const [branchDownload] = await Promise.all([page.waitForEvent("download"), page.click("#export-branch")]);
  const branch = await readZip(await branchDownload.path());
  const branchManifest = JSON.parse(branch.get("manifest.json")!);
  expect(branchManifest.sessions).toHaveLength(1);
  expect(branchManifest.sessions[0].leafId).toBe(dstAnswerId);
  const branchSession = branch.get(`sessions/${branchManifest.sessions[0].id}.jsonl`)!;
  expect(branchSession).toContain("due-date.dst.test.ts");
  expect(branchSession).not.toContain("The README now says");
  // Only the image on that branch (the first user message's) goes along.
  expect(branchManifest.blobs).toHaveLength(1);
});

test("choosing an entry in the tree shows the context of its branch", async ({ page }) => {
  await openViewer(page);
  const context = contextBox(page);
  await expect(context).toContainText("The README now says dates are local");
  await expect(context).not.toContainText("Added `due-date.dst.test.ts`");

  const dstAnswer = treeRow(page, "assistant: Added `due-date.dst");
  await dstAnswer.click();
  await expect(dstAnswer).toHaveClass(/is-leaf/);
  await expect(page.locator("#tree .leaf-marker")).toHaveCount(1);
  await expect(context).toContainText("Added `due-date.dst.test.ts`");
  await expect(context).not.toContainText("The README now says dates are local");
  await expect(context.locator("article.role-branchSummary")).toHaveCount(0);
  await expect(context.locator(".context-meta")).toContainText("model openai/gpt-5 · thinking high");

  // Before the compaction: the first user message with its screenshot, thinking collapsed.
  await treeRow(page, "user: The due-date test fails on CI").click();
  await expect(context.locator("article")).toHaveCount(1);
  await expect(context.locator("article.role-user img")).toHaveAttribute("src", /^data:image\/png;base64,/);
  await expect(context.locator(".context-meta")).toContainText("model anthropic/claude-sonnet-4-5 · thinking medium");
  await treeRow(page, "assistant: A test that fails only").click();
  const thinking = context.locator("details.thinking");
  await expect(thinking).not.toHaveAttribute("open");
  await expect(thinking.locator(".text")).toBeHidden();
  await thinking.locator("summary").click();
  await expect(thinking.locator(".text")).toBeVisible();
});

test("sessions persist across a reload, and a deleted one stays deleted", async ({ page }) => {
  await openViewer(page);
  const file = await writeSessionFile("persist.jsonl", "e2e-persist-session", "Will this survive?", "It will.");
  await page.setInputFiles("#import-input", file);
  await settled(page);
  await expect(sessionItems(page)).toHaveCount(2);

  await page.reload();
  await settled(page);
  await expect(sessionItems(page)).toHaveCount(2);
  await page.locator("#session-list li.session", { hasText: "Will this survive?" }).locator("button").click();
  await settled(page);
  await expect(contextBox(page)).toContainText("It will.");

  page.once("dialog", (dialog) => void dialog.accept());
  await page.click("#delete-session");
  await settled(page);
  await expect(page.locator("#messages")).toContainText("Deleted “Will this survive?”");
  await expect(sessionItems(page)).toHaveCount(1);

  await page.reload();
  await settled(page);
  await expect(sessionItems(page)).toHaveText([new RegExp(SAMPLE_TITLE)]);
});

test("OPFS can be chosen: it has its own store, and the choice survives a reload", async ({ page }) => {
  await openViewer(page);
  await page.selectOption("#backend", "opfs");
  await settled(page);
  // A new, empty store: the sample is imported there too.
  await expect(sessionItems(page)).toHaveCount(1);
  await expect(contextBox(page).locator("article.role-toolResult img")).toHaveAttribute("src", /^data:image\/png;base64,/);

  const file = await writeSessionFile("opfs.jsonl", "e2e-opfs-session", "Stored in OPFS?", "Yes, in the origin private file system.");
  await page.setInputFiles("#import-input", file);
  await settled(page);
  await expect(sessionItems(page)).toHaveCount(2);

  await page.reload();
  await settled(page);
  await expect(page.locator("#backend")).toHaveValue("opfs");
  await expect(sessionItems(page)).toHaveCount(2);
  await page.locator("#session-list li.session", { hasText: "Stored in OPFS?" }).locator("button").click();
  await settled(page);
  await expect(contextBox(page)).toContainText("Yes, in the origin private file system.");

  await page.selectOption("#backend", "indexeddb");
  await settled(page);
  await expect(sessionItems(page)).toHaveText([new RegExp(SAMPLE_TITLE)]);
});
