/** Shared by the viewer's e2e specs: the served build's address, waiting for it, small session files. */
import { readFile } from "node:fs/promises";
import { TextWriter, Uint8ArrayReader, ZipReader } from "@zip.js/zip.js";
import { expect, type Page } from "@playwright/test";

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

export const treeRow = (page: Page, text: string) => page.locator("#tree .tree-node", { hasText: text });
export const entries = (page: Page) => page.locator("#messages .entry");
export const sessionItems = (page: Page) => page.locator("#session-list li.session");
