/**
 * The insights view in the viewer as `npm start` serves it, over a temp $HOME whose pi store holds
 * a session written here (three turns, a branch, a compaction, a failed tool) and three real
 * corpus sessions (one of them a v1 file, migrated on load): for every session, the tokens, cost
 * and tool calls the view shows are the header's, character for character; its turns and tools
 * are the ones written; the store view's row of a session shows the header's cost; the charts
 * break no rule of the page's Content Security Policy; the view and its charting library load only
 * when it opens; Close and Esc go back to the session.
 */
import type { ChildProcess } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test, type Page } from "@playwright/test";
import { sessionDirFor, sessionFileName } from "../src/session/paths.js";
import { settled, startNpmStart, stopNpmStart } from "./viewer-helpers.js";

let home: string;
let serve: ChildProcess;
let serveUrl: URL;
let piStore: string;
const paths: string[] = [];
let writtenPath: string;

async function putSession(root: string, text: string, copyFrom?: string): Promise<string> {
  const header = JSON.parse(text.slice(0, text.indexOf("\n"))) as { id: string; timestamp: string; cwd?: string };
  const dir = sessionDirFor(header.cwd ?? "/");
  const path = `${dir}/${sessionFileName(header.timestamp, header.id)}`;
  await mkdir(join(root, dir), { recursive: true });
  if (copyFrom) await copyFile(copyFrom, join(root, path));
  else await writeFile(join(root, path), text);
  return path;
}

const at = (second: number) => `2026-03-02T09:00:${String(second).padStart(2, "0")}.000Z`;
/** Dollars in multiples of 2^-3: sums are exact. */
const usage = (input: number, output: number, cacheRead: number, dollars: number) => ({ input, output, cacheRead, cacheWrite: 0, totalTokens: 0, cost: { input: dollars, output: 0, cacheRead: 0, cacheWrite: 0, total: dollars } });
const assistant = (id: string, parentId: string, second: number, used: ReturnType<typeof usage>, calls: string[] = []) => ({
  type: "message",
  id,
  parentId,
  timestamp: at(second),
  message: {
    role: "assistant",
    content: calls.length ? calls.map((call) => ({ type: "toolCall", id: call, name: call.startsWith("b") ? "bash" : "read", arguments: {} })) : [{ type: "text", text: "done" }],
    provider: "anthropic",
    model: "claude-e2e",
    usage: used,
    stopReason: calls.length ? "toolUse" : "stop",
    timestamp: 0,
  },
});
const user = (id: string, parentId: string | null, second: number, text: string) => ({ type: "message", id, parentId, timestamp: at(second), message: { role: "user", content: text, timestamp: 0 } });
const result = (id: string, parentId: string, second: number, call: string, isError: boolean) => ({
  type: "message",
  id,
  parentId,
  timestamp: at(second),
  message: { role: "toolResult", toolCallId: call, toolName: call.startsWith("b") ? "bash" : "read", content: [{ type: "text", text: "output" }], isError, timestamp: 0 },
});

/** Three turns; a branch off the first prompt; a compaction in turn 2; bash fails once. */
const WRITTEN = [
  { type: "session", version: 3, id: "e2e-insights-0001", timestamp: at(0), cwd: "/home/e2e/insights" },
  user("u1", null, 1, "count the zebras"),
  assistant("a1", "u1", 2, usage(1000, 100, 0, 0.5), ["b1", "r1"]),
  result("t1", "a1", 5, "b1", true),
  result("t2", "t1", 6, "r1", false),
  assistant("a2", "t2", 8, usage(2000, 200, 1000, 0.25)),
  assistant("x1", "u1", 9, usage(500, 50, 0, 0.125)), // the branch: in the totals, not in the turns
  user("u2", "a2", 20, "now the lions"),
  assistant("a3", "u2", 22, usage(4000, 300, 2000, 1)),
  { type: "compaction", id: "c1", parentId: "a3", timestamp: at(23), summary: "zebras and lions", firstKeptEntryId: "u2", tokensBefore: 7000 },
  user("u3", "c1", 30, "and the giraffes"),
  assistant("a4", "u3", 33, usage(1500, 100, 0, 0.125), ["b2"]),
  result("t3", "a4", 34, "b2", false),
  assistant("a5", "t3", 36, usage(1800, 120, 0, 0.125)),
];

test.describe.configure({ mode: "serial" });

test.beforeAll(async () => {
  test.setTimeout(600_000);
  home = await mkdtemp(join(tmpdir(), "sessionkit-insights-e2e-"));
  const piRoot = join(home, ".pi", "agent");
  writtenPath = await putSession(piRoot, WRITTEN.map((record) => JSON.stringify(record)).join("\n") + "\n");
  paths.push(writtenPath);
  for (const file of ["badlogic__pi-mono/compact.jsonl", "hassanad94__dotfiles/2026-05-11T16-45-25-267Z_019e17ed-dd93-72ed-8a55-e44bfa9d2253.jsonl", "alhajjemohammad44-stack__93-coffee-shop/2026-07-05T02-10-57-253Z_019f300b-0864-715c-9025-dd00e574139c.jsonl"]) {
    const source = join("test/fixtures/corpus", file);
    const text = await readFile(source, "utf8");
    paths.push(await putSession(piRoot, text.slice(0, text.indexOf("\n") + 1), source));
  }
  ({ process: serve, url: serveUrl } = await startNpmStart({ HOME: home, XDG_CACHE_HOME: join(home, ".cache") }));
  const stores = (await (await fetch(new URL(`/api/stores${serveUrl.search}`, serveUrl))).json()) as { id: string; agent?: string }[];
  piStore = stores.find((store) => store.agent === "pi")!.id;
});

test.afterAll(async () => {
  await stopNpmStart(serve);
  await rm(home, { recursive: true, force: true });
});

const headerValue = (page: Page, field: string) => page.locator(`#session-header [data-field="${field}"] .info-value`).textContent();
const insightsValue = (page: Page, field: string) => page.locator(`#insights [data-field="${field}"] .info-value`).textContent();

async function openSession(page: Page, path: string): Promise<void> {
  await page.goto(`${serveUrl.href}#store=${piStore}&session=${encodeURIComponent(path)}`);
  await settled(page);
  await expect(page.locator("#messages .entry").first()).toBeVisible();
}

async function openInsightsOf(page: Page): Promise<void> {
  await page.click("#action-insights");
  await expect(page.locator("#insights")).toBeVisible();
  await settled(page);
  await expect(page.locator("#insights #insights-totals")).toBeVisible();
}

test("every session: the view's tokens, cost and tool calls are the header's; the charts break no rule of the page's CSP", async ({ page }) => {
  await page.addInitScript(() => {
    const w = window as unknown as { __violations: string[] };
    w.__violations = [];
    document.addEventListener("securitypolicyviolation", (event) => w.__violations.push(`${event.violatedDirective} ${event.blockedURI} ${event.sample}`));
  });
  for (const path of paths) {
    await openSession(page, path);
    const header = { tokens: await headerValue(page, "tokens"), cost: await headerValue(page, "cost"), calls: await headerValue(page, "tool-calls") };
    await openInsightsOf(page);
    expect({ tokens: await insightsValue(page, "tokens"), cost: await insightsValue(page, "cost"), calls: await insightsValue(page, "tool-calls") }, path).toEqual(header);
    // Both charts drawn (a canvas each), the session hidden under the view.
    await expect(page.locator("#insights .chart-canvas canvas")).toHaveCount(2);
    await expect(page.locator("#messages")).toBeHidden();
  }
  expect(await page.evaluate(() => (window as unknown as { __violations: string[] }).__violations)).toEqual([]);
  // The check hears violations: an inline style, which the policy forbids, is one (reported by the
  // meta tag's policy and the header's).
  await page.evaluate(() => document.head.insertAdjacentHTML("beforeend", "<style>body { color: red }</style>"));
  await expect.poll(() => page.evaluate(() => (window as unknown as { __violations: string[] }).__violations.length)).toBeGreaterThan(0);
});

test("the written session: its turns on the viewed branch, the compaction, its tools; the store view's row shows the header's cost", async ({ page }) => {
  await openSession(page, writtenPath);
  expect(await headerValue(page, "cost")).toBe("$2.125");
  await openInsightsOf(page);
  await expect(page.locator("#insights [data-field=\"turns\"] .info-value")).toHaveText("3");
  // The branch (x1, $0.125) is in the totals, not on the path.
  await expect(page.locator("#insights [data-field=\"branch-cost\"] .info-value")).toHaveText("$2.000");
  await expect(page.locator("#insights [data-field=\"compactions\"] .info-value")).toHaveText("1");
  const rows = page.locator("#insights-turns tbody tr");
  await expect(rows).toHaveCount(3);
  const cells = async (row: number) => (await rows.nth(row).locator("td").allTextContents()).map((text) => text.trim());
  const columns = (await page.locator("#insights-turns thead th").allTextContents()).map((text) => text.trim());
  const turn = async (row: number) => {
    const values = await cells(row);
    return Object.fromEntries(columns.map((column, i) => [column, values[i]]));
  };
  expect(await turn(0)).toMatchObject({ Turn: "1", Time: "7.0 s", Cost: "$0.750", Context: "3.0k", Calls: "2", Tools: "2", Failed: "1", Prompt: "count the zebras" });
  expect(await turn(1)).toMatchObject({ Turn: "2", Cost: "$1.000", Context: "6.0k", Compacted: "7.0k", Prompt: "now the lions" });
  expect(await turn(2)).toMatchObject({ Turn: "3", Time: "6.0 s", Cost: "$0.250", Context: "1.8k", Failed: "" });
  const tools = Object.fromEntries(
    await Promise.all((await page.locator("#insights-tools tbody tr").all()).map(async (row) => [(await row.locator("td").first().textContent())!, (await row.locator("td").allTextContents()).slice(1)])),
  );
  // bash: 3 s (after its call's message) and 1 s (after the next turn's call); read: 1 s after bash's result.
  expect(tools).toEqual({ bash: ["2", "2", "1", "4.0 s", "2.0 s", "3.0 s", "12 B"], read: ["1", "1", "", "1.0 s", "1.0 s", "1.0 s", "6 B"] });

  await page.click('#insights [data-scope="store"]');
  await expect(page.locator("#insights")).toHaveAttribute("data-scope", "store");
  await expect(page.locator("#insights-by-session")).toBeVisible();
  const row = page.locator("#insights-by-session tbody tr", { has: page.locator(`[data-path="${writtenPath}"]`) });
  const costColumn = (await page.locator("#insights-by-session thead th").allTextContents()).indexOf("Cost");
  await expect(row.locator("td").nth(costColumn)).toHaveText("$2.125");
  // The filter narrows as the list's does: words of the first message.
  await page.fill("#insights-filter", "zebras");
  await expect(page.locator("#insights-status")).toHaveText(/^1 of \d+ sessions$/);
  await expect(page.locator("#insights [data-field=\"cost\"] .info-value")).toHaveText("$2.125");
  await expect(page.locator("#insights .chart-canvas canvas")).toHaveCount(1);
});

test("the view and uPlot load only when it opens; Close and Esc go back to the session", async ({ page }) => {
  const scripts: string[] = [];
  page.on("request", (request) => void (request.resourceType() === "script" && scripts.push(new URL(request.url()).pathname)));
  await openSession(page, paths[1]!);
  expect(scripts.some((path) => path.includes("insights-view"))).toBe(false);
  await openInsightsOf(page);
  expect(scripts.filter((path) => path.includes("insights-view"))).toHaveLength(1);
  await page.click("#insights-close");
  await expect(page.locator("#insights")).toHaveCount(0);
  await expect(page.locator("#messages")).toBeVisible();
  expect(new URL(page.url()).hash).toContain(`session=${encodeURIComponent(paths[1]!)}`);
  await openInsightsOf(page);
  await page.keyboard.press("Escape");
  await expect(page.locator("#insights")).toHaveCount(0);
  // The bar's button: the listed sessions, with no session needed.
  await page.click("#insights-open");
  await expect(page.locator("#insights")).toHaveAttribute("data-scope", "store");
  await settled(page);
  await expect(page.locator("#insights-by-model")).toBeVisible();
});

test("the store view of every store, the read-only sample's among them (no cache there to read), asks for nothing that is not there: no failed load, no console error", async ({ page }) => {
  const failed: string[] = [];
  page.on("response", (response) => void (response.status() >= 400 && failed.push(`${response.status()} ${decodeURIComponent(new URL(response.url()).pathname)}`)));
  page.on("console", (message) => void (message.type() === "error" && failed.push(message.text())));
  await openSession(page, paths[1]!);
  await page.click("#insights-open");
  await expect(page.locator("#insights")).toHaveAttribute("data-scope", "store");
  await settled(page);
  await expect(page.locator("#insights-by-session tbody tr")).not.toHaveCount(0);
  // Every store's sessions: the sample's too.
  await expect(page.locator("#insights-status")).toHaveText(/\d+ sessions/);
  expect(failed).toEqual([]);
});
