/**
 * Hostile sessions (e2e/hostile-session.ts: payloads in every field) in the built viewer, served,
 * and in an HTML export opened from file://: with every node expanded and every view opened, no
 * dialog, no payload ran, no CSP violation, no request left the page, nothing from the session
 * restyled it; and the app's and the exported file's Content Security Policy forbid inline and
 * remote script (checked by running an inline script and a remote one: both are refused). Text
 * built to break or freeze a renderer renders as raw text where it must, within 50 ms of layout,
 * and the entries after it render.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { expect, test, type Page } from "@playwright/test";
import { hostileSessionJsonl } from "./hostile-session.js";
import { checkHostileText, exercise, watchPage } from "./hostile-check.js";
import { VIEWER_URL, settled, showSessionList } from "./viewer-helpers.js";

const run = promisify(execFile);
let tempDir: string;
let sessionFile: string;

test.beforeAll(async () => {
  tempDir = await mkdtemp(join(tmpdir(), "sessionkit-hostile-e2e-"));
  sessionFile = join(tempDir, "hostile.jsonl");
  await writeFile(sessionFile, hostileSessionJsonl("hostile-session"));
});

test.afterAll(async () => {
  await rm(tempDir, { recursive: true, force: true });
});

/** Whether the page's policy lets an inline script and a remote script run (it must not). */
async function policyBlocksScripts(page: Page): Promise<{ inline: boolean; remote: boolean }> {
  return page.evaluate(async () => {
    const w = window as unknown as { __inlineRan?: boolean; __violations: string[] };
    const inline = document.createElement("script");
    inline.textContent = "window.__inlineRan = true";
    document.body.append(inline);
    const remote = document.createElement("script");
    remote.src = "http://evil.example/x.js";
    const remoteResult = await new Promise<string>((resolve) => {
      remote.onload = () => resolve("loaded");
      remote.onerror = () => resolve("blocked");
      document.body.append(remote);
    });
    inline.remove();
    remote.remove();
    const blocked = { inline: w.__inlineRan !== true, remote: remoteResult === "blocked" && w.__violations.some((v) => v.startsWith("script-src")) };
    w.__violations.length = 0;
    return blocked;
  });
}

test("served: a hostile session imported into the viewer runs nothing, loads nothing, restyles nothing", async ({ page }) => {
  test.setTimeout(120_000);
  const watch = await watchPage(page, new URL(VIEWER_URL).origin);
  await page.goto(VIEWER_URL);
  await settled(page);
  await page.setInputFiles("#import-input", sessionFile);
  await settled(page);
  await expect(page.locator("#session-header h1")).toContainText("<script>");
  await checkHostileText(page, "served");
  await exercise(page);
  await showSessionList(page);
  await page.fill("#global-search", "script");
  await page.press("#global-search", "Enter");
  await settled(page);
  await expect(page.locator("#global-results .search-hit").first()).toBeVisible();
  await page.locator("#global-results .search-hit button").first().click();
  await settled(page);
  const [download] = await Promise.all([page.waitForEvent("download"), page.click("#action-jsonl")]);
  expect((await readFile(await download.path(), "utf8")).split("\n")[0]).toContain("hostile-session");
  await watch.check();
  expect(await policyBlocksScripts(page)).toEqual({ inline: true, remote: true });
  // The blocked remote script was asked for (and refused by the policy before it left the page).
  watch.requests.length = 0;
});

test("exported: the same session as an HTML file from file://, network blocked", async ({ browser }) => {
  test.setTimeout(120_000);
  const output = join(tempDir, "hostile.html");
  await run("npx", ["tsx", "cli/main.ts", "export", "--html", sessionFile, "-o", output, "--force"], { cwd: process.cwd() });
  const context = await browser.newContext();
  await context.route(/^(?!file:|blob:|data:)/, (route) => route.abort());
  const page = await context.newPage();
  const watch = await watchPage(page, null);
  await page.goto(pathToFileURL(output).href);
  await settled(page);
  await expect(page.locator("#session-header h1")).toContainText("<script>");
  await checkHostileText(page, "exported");
  await exercise(page);
  await watch.check();
  expect(await policyBlocksScripts(page)).toEqual({ inline: true, remote: true });
  await context.close();
});
