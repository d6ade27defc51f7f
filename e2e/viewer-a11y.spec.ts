/**
 * Accessibility of the built viewer in Debian's Chromium: axe-core (@axe-core/playwright) finds
 * no serious or critical violation on the list of sessions, a session, the tree, search (across
 * sessions and in the session) and the HTML export, each in light and in dark; and the main
 * actions are reached with Tab in reading order and work from the keyboard (the list's drawer,
 * theme, keys, the tree and its search and filters, the header's details and downloads, an
 * image's zoom, Esc closing what was opened). Every violation found is printed, whatever its
 * impact.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { AxeBuilder } from "@axe-core/playwright";
import { expect, test, type Page } from "@playwright/test";
import { openViewer, settled, showSessionList } from "./viewer-helpers.js";

const run = promisify(execFile);
let tempDir: string;
let exported: string;

test.beforeAll(async () => {
  tempDir = await mkdtemp(join(tmpdir(), "sessionkit-a11y-e2e-"));
  exported = join(tempDir, "sample.html");
  await run("npx", ["tsx", "cli/main.ts", "export", "--html", "web-demo/src/samples/pi-sample.jsonl", "-o", exported]);
});

test.afterAll(async () => {
  await rm(tempDir, { recursive: true, force: true });
});

/** Runs axe on the page as it is; prints every violation; returns the serious and critical ones. */
async function scan(page: Page, what: string): Promise<string[]> {
  const { violations } = await new AxeBuilder({ page }).analyze();
  for (const v of violations) {
    console.log(`axe ${what}: ${v.impact} ${v.id} (${v.nodes.length}): ${v.nodes[0]?.target.join(" ")}`);
    for (const n of v.nodes) console.log("   ", n.target.join(" "), JSON.stringify(n.any[0]?.data ?? null));
  }
  if (violations.length === 0) console.log(`axe ${what}: no violation`);
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
}

for (const scheme of ["light", "dark"] as const) {
  test(`axe, ${scheme}: the list, a session, the tree, search across sessions and in the session`, async ({ page }) => {
    test.setTimeout(90_000);
    await page.emulateMedia({ colorScheme: scheme });
    await page.setViewportSize({ width: 1280, height: 900 });
    await openViewer(page);
    expect(await scan(page, `${scheme} session`)).toEqual([]);

    await page.locator("#tree").focus();
    await page.keyboard.press("Home");
    await page.click('.filter-btn[data-filter="all"]');
    expect(await scan(page, `${scheme} tree, All filter, keyboard cursor`)).toEqual([]);

    await page.fill("#tree-search", "timezone readme");
    await expect(page.locator("#tree-status")).toHaveText("2 / 27 entries");
    expect(await scan(page, `${scheme} search in the session`)).toEqual([]);

    await showSessionList(page);
    expect(await scan(page, `${scheme} list`)).toEqual([]);
    await page.fill("#global-search", "readme");
    await page.press("#global-search", "Enter");
    await settled(page);
    await expect(page.locator("#global-results .search-hit").first()).toBeVisible();
    expect(await scan(page, `${scheme} search across sessions`)).toEqual([]);
  });

  test(`axe, ${scheme}: the HTML export from file://`, async ({ page }) => {
    await page.emulateMedia({ colorScheme: scheme });
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(pathToFileURL(exported).href);
    await settled(page);
    await expect(page.locator("#messages .entry").first()).toBeVisible();
    expect(await scan(page, `${scheme} export`)).toEqual([]);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.click("#menu");
    await expect(page.locator("#sidebar")).toBeInViewport();
    expect(await scan(page, `${scheme} export on a phone, tree open`)).toEqual([]);
  });
}

/** Presses Tab until `selector` has the focus (at most `limit` times); the focused elements on the way, by id or class. */
async function tabTo(page: Page, selector: string, limit = 40): Promise<string[]> {
  const path: string[] = [];
  for (let i = 0; i < limit; i++) {
    await page.keyboard.press("Tab");
    const focused = await page.evaluate((s) => {
      const active = document.activeElement as HTMLElement | null;
      return { here: active?.matches(s) ?? false, name: active ? active.id || `.${[...active.classList].join(".")}` || active.tagName : "none" };
    }, selector);
    path.push(focused.name);
    if (focused.here) return path;
  }
  throw new Error(`Tab never reached ${selector}: ${path.join(" → ")}`);
}

test("keyboard: the main actions in reading order by Tab, each working from the keyboard", async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 900 });
  await openViewer(page);
  await page.locator("body").focus();
  // The bar first: the list's drawer opens with Enter (focus to its filter) and Esc closes it (focus back).
  const toBar = await tabTo(page, "#sessions-toggle");
  await page.keyboard.press("Enter");
  await expect(page.locator("#list-pane")).toBeVisible();
  await expect(page.locator("#session-filter")).toBeFocused();
  await page.keyboard.press("Escape");
  await expect(page.locator("#list-pane")).toBeHidden();
  await expect(page.locator("#sessions-toggle")).toBeFocused();
  const toTheme = await tabTo(page, "#theme");
  const toKeys = await tabTo(page, "#keys-help");
  await page.keyboard.press("Enter");
  await expect(page.locator("#keys-dialog")).toBeVisible();
  await page.keyboard.press("Escape");
  await expect(page.locator("#keys-dialog")).toHaveCount(0);

  // The tree's search and filters, then the tree: arrows move, Enter opens.
  const toSearch = await tabTo(page, "#tree-search");
  const toFilter = await tabTo(page, '.filter-btn[data-filter="user-only"]');
  await page.keyboard.press("Enter");
  await expect(page.locator("#tree-status")).toHaveText("4 / 27 entries");
  const toTree = await tabTo(page, "#tree");
  await page.keyboard.press("Home");
  await page.keyboard.press("Enter");
  await expect(page.locator("#messages .entry.target")).toContainText("The due-date test fails");

  // The header: Details opens the actions under the line; Tab reaches a download.
  await page.keyboard.press("End");
  await page.keyboard.press("Enter");
  await expect(page.locator("#session-header")).toHaveClass(/scrolled/);
  const toDetails = await tabTo(page, "#header-toggle");
  await page.keyboard.press("Enter");
  await expect(page.locator("#header-details")).toBeInViewport();
  const toDownload = await tabTo(page, "#action-jsonl");
  const [download] = await Promise.all([page.waitForEvent("download"), page.keyboard.press("Enter")]);
  expect(download.suggestedFilename()).toMatch(/\.jsonl$/);

  // Into the messages: an image's zoom opens with Enter, Esc closes it and gives the focus back.
  await page.click('.filter-btn[data-filter="default"]');
  await page.locator("#tree .tree-node", { hasText: "npm test" }).first().click();
  await page.locator("#tree-search").focus();
  const toImage = await tabTo(page, ".image-zoom", 80);
  await page.keyboard.press("Enter");
  await expect(page.locator("#image-modal")).toBeVisible();
  await expect(page.locator(".image-modal-close")).toBeFocused();
  await page.keyboard.press("Escape");
  await expect(page.locator("#image-modal")).toHaveCount(0);
  await expect(page.locator(".image-zoom")).toBeFocused();

  const order = [toBar, toTheme, toKeys, toSearch, toFilter, toTree, toDetails, toDownload, toImage].map((path) => path.length);
  console.log(`Tab presses to reach: sessions ${order[0]}, theme ${order[1]}, keys ${order[2]}, tree search ${order[3]}, a filter ${order[4]}, tree ${order[5]}, details ${order[6]}, a download ${order[7]}, an image ${order[8]}`);
  console.log(`Tab order into the messages: ${toImage.join(" → ")}`);
});
