/**
 * Shared by the viewer's e2e specs (static mode over `vite preview`, serve mode over `npm start`,
 * exports): the served build's address, waiting for it, small session files, and the checks both
 * modes make of the bundled pi sample (header, filters, search, deep links) and of its HTML export
 * opened from file:// with the network blocked.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { readFile } from "node:fs/promises";
import { createInterface } from "node:readline";
import { TextWriter, Uint8ArrayReader, ZipReader } from "@zip.js/zip.js";
import { expect, type Browser, type Page } from "@playwright/test";

export const VIEWER_URL = `http://127.0.0.1:${process.env.SESSIONKIT_E2E_VIEWER_PORT}/`;
export const SAMPLE_TITLE = "Flaky due-date test";

/** Waits until the viewer has finished what it was doing (loading, importing, switching stores). */
export async function settled(page: Page): Promise<void> {
  await expect(page.locator("body")).toHaveAttribute("data-status", "ready");
}

export async function openViewer(page: Page, hash = ""): Promise<void> {
  await page.goto(VIEWER_URL + hash);
  await settled(page);
  await expect(page.locator("#messages .entry").first()).toBeVisible();
}

/** A small pi session file (v3): question → answer, optionally more turns. */
export function sessionJsonl(id: string, turns: [question: string, answer: string][]): string {
  const t = "2026-02-01T12:00:00.000Z";
  const records: unknown[] = [{ type: "session", version: 3, id, timestamp: t, cwd: "/home/e2e/project" }];
  let parent: string | null = null;
  turns.forEach(([question, answer], i) => {
    records.push({ type: "message", id: `q${i}`, parentId: parent, timestamp: t, message: { role: "user", content: question, timestamp: 1 } });
    records.push({
      type: "message",
      id: `a${i}`,
      parentId: `q${i}`,
      timestamp: t,
      message: { role: "assistant", content: [{ type: "text", text: answer }], provider: "anthropic", model: "claude-test", api: "anthropic-messages", stopReason: "stop", timestamp: 2 },
    });
    parent = `a${i}`;
  });
  return records.map((r) => JSON.stringify(r)).join("\n") + "\n";
}

export async function readZip(path: string): Promise<Map<string, string>> {
  const reader = new ZipReader(new Uint8ArrayReader(new Uint8Array(await readFile(path))));
  const members = new Map<string, string>();
  for (const entry of await reader.getEntries()) {
    if (!entry.directory) members.set(entry.filename, await entry.getData!(new TextWriter()));
  }
  await reader.close();
  return members;
}

/** Opens the list of sessions (a drawer below 1500 px of width) unless it is shown. */
export async function showSessionList(page: Page): Promise<void> {
  const toggle = page.locator("#sessions-toggle");
  if ((await toggle.getAttribute("aria-expanded")) !== "true") await toggle.click();
  await expect(page.locator("#list-pane")).toBeVisible();
}

export const treeRow = (page: Page, text: string) => page.locator("#tree .tree-node", { hasText: text });
export const entries = (page: Page) => page.locator("#messages .entry");
export const sessionItems = (page: Page) => page.locator("#session-list li.session");

const field = (page: Page, name: string) => page.locator(`#session-header [data-field="${name}"] .info-value`);

/** The bundled sample, open at its leaf: header figures over all branches, tree labels, the leaf's branch, an image, a diff. */
export async function checkSampleSession(page: Page): Promise<void> {
  await expect(page.locator("#session-header h1")).toHaveText(SAMPLE_TITLE);
  await expect(field(page, "messages")).toHaveText("3 user, 8 assistant, 5 tool results, 1 custom, 1 compactions, 1 branch summaries");
  await expect(field(page, "tool-calls")).toHaveText("5");
  await expect(field(page, "tokens")).toHaveText("↑9.6k ↓1.4k");
  await expect(field(page, "cost")).toHaveText("$0.050");
  await expect(field(page, "models")).toHaveText("anthropic/claude-sonnet-4-5, openai/gpt-5");
  await expect(field(page, "cwd")).toHaveText("/home/demo/todo-app");
  await expect(page.locator("#tree-status")).toHaveText("19 / 27 entries");
  await expect(page.locator("#tree .tree-label")).toHaveText(["[fix applied]", "[dst attempt]"]);
  // The leaf's branch ends with the README answer; the other branch's answer is not on it.
  await expect(entries(page).last()).toContainText("The README now says dates are local");
  await expect(page.locator("#messages")).not.toContainText("Added due-date.dst.test.ts");
  const image = page.locator("#messages .tool-images img");
  await expect.poll(() => image.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(64);
  await expect(page.locator("#messages .tool-execution[data-tool='edit'] .diff-added").first()).toContainText("+## Testing");
}

/** The bundled sample: every filter with "N / M entries" (and in the address), search in the session, Esc clearing it. */
export async function checkFiltersAndSearch(page: Page): Promise<void> {
  const status = page.locator("#tree-status");
  const expected: [string, string][] = [
    ["all", "25 / 27 entries"],
    ["no-tools", "14 / 27 entries"],
    ["user-only", "4 / 27 entries"],
    ["labeled-only", "3 / 27 entries"],
    ["default", "19 / 27 entries"],
  ];
  for (const [filter, text] of expected) {
    await page.click(`.filter-btn[data-filter="${filter}"]`);
    await expect(page.locator(`.filter-btn[data-filter="${filter}"]`)).toHaveAttribute("aria-pressed", "true");
    await expect(status).toHaveText(text);
    await expect(page).toHaveURL(filter === "default" ? /^(?!.*filter=)/ : new RegExp(`filter=${filter}`));
  }
  await page.click('.filter-btn[data-filter="user-only"]');
  // Three user messages, and the viewed leaf (always listed).
  await expect(page.locator("#tree .tree-node .role-user")).toHaveCount(3);

  await page.click('.filter-btn[data-filter="default"]');
  await page.fill("#tree-search", "timezone readme");
  await expect(status).toHaveText("2 / 27 entries");
  await expect(page.locator("#tree .tree-node")).toHaveText([/user: Forget the DST test/, /assistant: The README now says/]);
  await page.locator("#tree .tree-node", { hasText: "Forget the DST" }).click();
  await expect(page.locator("#messages .entry.target")).toContainText("Forget the DST test");
  await page.locator("body").click({ position: { x: 5, y: 5 } });
  await page.keyboard.press("Escape");
  await expect(page.locator("#tree-search")).toHaveValue("");
  await expect(status).toHaveText("19 / 27 entries");
}

/** The bundled sample: a tree entry opens its newest leaf, the link survives a reload, a branch point's other branch, copy-link. */
export async function checkDeepLinks(page: Page): Promise<void> {
  await treeRow(page, "Add a test for the day daylight").click();
  await expect(entries(page).last()).toContainText("Added due-date.dst.test.ts");
  await expect(page.locator("#messages .entry.target")).toContainText("Add a test for the day daylight saving");
  await expect(page.locator("#messages")).not.toContainText("The README now says");
  const url = page.url();
  expect(url).toMatch(/leaf=/);
  expect(url).toMatch(/target=/);
  await page.reload();
  await settled(page);
  await expect(entries(page).last()).toContainText("Added due-date.dst.test.ts");
  await expect(page.locator("#messages .entry.target")).toContainText("Add a test for the day daylight saving");

  // The branch point offers both branches; the other one opens from there.
  const point = page.locator("#messages .branch-point");
  await expect(point.locator(".branch-link")).toHaveCount(2);
  await point.locator(".branch-link:not(.current)").click();
  // The view is centred on the branch's first entry: its end is further down.
  await page.locator("#messages").evaluate((m) => (m.scrollTop = m.scrollHeight));
  await expect(entries(page).last()).toContainText("The README now says");

  const last = entries(page).last();
  const id = await last.getAttribute("data-entry-id");
  await last.hover();
  await last.locator(".copy-link").click();
  await expect(page).toHaveURL(new RegExp(`target=${id}`));
  await page.reload();
  await settled(page);
  await expect(page.locator("#messages .entry.target")).toHaveAttribute("data-entry-id", id!);
}

/** A page with no network: anything but file:, blob: and data: is aborted and recorded. */
export async function offlinePage(browser: Browser): Promise<{ page: Page; requests: string[]; close: () => Promise<void> }> {
  const context = await browser.newContext();
  const requests: string[] = [];
  await context.route(/^(?!file:|blob:|data:)/, (route) => {
    requests.push(route.request().url());
    return route.abort();
  });
  return { page: await context.newPage(), requests, close: () => context.close() };
}

/** The bundled sample's HTML export at `url` (a file:// page): header, filters, images, a deep link over a reload, search. */
export async function checkExportedSample(page: Page, url: string): Promise<void> {
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

/** `npm start` serving with `env`, and the URL it printed. */
export interface NpmStart {
  process: ChildProcess;
  url: URL;
}

/** Runs `npm start -- --port 0` in a process group of its own; resolves once it prints its URL. */
export async function startNpmStart(env: NodeJS.ProcessEnv): Promise<NpmStart> {
  const child = spawn("npm", ["start", "--", "--port", "0"], {
    env: { ...process.env, PI_CODING_AGENT_DIR: "", ...env },
    stdio: ["ignore", "pipe", "inherit"],
    // Its own process group: stopped by stopNpmStart as a terminal's Ctrl+C stops it.
    detached: true,
  });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on("line", (text) => text.startsWith("sessionkit serve: ") && resolve(text));
    child.once("exit", (code) => reject(new Error(`npm start exited (${code}) before printing its URL`)));
  });
  return { process: child, url: new URL(line.slice("sessionkit serve: ".length)) };
}

/** Ctrl+C to a running `npm start`: it must exit 0. */
export async function stopNpmStart(child: ChildProcess | undefined): Promise<void> {
  if (child?.exitCode !== null || child.pid === undefined) return;
  const exited = once(child, "exit");
  process.kill(-child.pid, "SIGINT");
  const [code] = (await exited) as [number | null];
  expect(code).toBe(0);
}
