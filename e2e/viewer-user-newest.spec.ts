/**
 * `npm start` on a $HOME with real pi sessions (files of the corpus, copied where pi keeps them)
 * besides the repository's sample store: the viewer opens the user's newest session, not a
 * sample; the user's sessions are listed first and the samples after them, under a heading of
 * their own; and a user whose newest session is older than the samples' newest still gets their
 * own session first.
 *
 * The screenshots of that view (wide 1280×900 with the list's drawer open, and phone 390×844,
 * light and dark; on the phone also with the list opened) go to the test's output folder, or to $SESSIONKIT_SCREENSHOTS when set:
 *
 *   SESSIONKIT_SCREENSHOTS=docs/screenshots npx playwright test e2e/viewer-user-newest.spec.ts
 */
import type { ChildProcess } from "node:child_process";
import { copyFile, mkdir, mkdtemp, rename, rm, utimes } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { expect, test, type Page } from "@playwright/test";
import { nodeFsStorage } from "../adapters/node-fs/index.js";
import { SessionManager, type SessionInfo } from "../src/index.js";
import { sessionItems, settled, showSessionList, startNpmStart, stopNpmStart } from "./viewer-helpers.js";

const CORPUS = "test/fixtures/corpus";
/** The user's sessions: two from 2026 and one from December 2025, older than every built sample. */
const NEWER = [`${CORPUS}/castai__kimchi-dev/statsuline.jsonl`, `${CORPUS}/LAF-US__IDAHO-VAULT/2026-04-20T03-24-41-541Z_019da8eb-3ac5-718a-87b3-276b77c76497.jsonl`];
const OLDER = `${CORPUS}/badlogic__pi-mono/session.jsonl`;
/** The sample store's sessions (scripts/build-samples.ts). */
const SAMPLE_STORE_SESSIONS = 8;

let home: string;
let projectDir: string;
let serve: ChildProcess;
let serveUrl: URL;
let stores: { id: string; label: string; agent?: string; samples?: boolean }[];

test.describe.configure({ mode: "serial" });

test.beforeAll(async () => {
  // The first run in a fresh checkout builds the CLI and the sample store.
  test.setTimeout(600_000);
  home = await mkdtemp(join(tmpdir(), "sessionkit-user-newest-"));
  projectDir = join(home, ".pi", "agent", "sessions", "--some-project--");
  await mkdir(projectDir, { recursive: true });
  // Copied now: recent mtimes, as files pi wrote lately have.
  for (const file of [...NEWER, OLDER]) await copyFile(file, join(projectDir, basename(file)));

  ({ process: serve, url: serveUrl } = await startNpmStart({ HOME: home, XDG_CACHE_HOME: join(home, ".cache") }));
  stores = (await (await fetch(new URL(`/api/stores${serveUrl.search}`, serveUrl))).json()) as typeof stores;
});

test.afterAll(async () => {
  await stopNpmStart(serve);
  await rm(home, { recursive: true, force: true });
});

/** The user's pi sessions as the library lists them, newest first. */
async function usersSessions(): Promise<SessionInfo[]> {
  const storage = nodeFsStorage({ root: join(home, ".pi", "agent") });
  try {
    return await SessionManager.listAll(storage);
  } finally {
    await storage.close();
  }
}

async function openServed(page: Page): Promise<void> {
  await page.goto(serveUrl.href);
  await settled(page);
}

/** What the address says is open. */
function openSession(page: Page): { store: string | null; session: string | null } {
  const hash = new URLSearchParams(new URL(page.url()).hash.slice(1));
  return { store: hash.get("store"), session: hash.get("session") };
}

/** Code is shown plain at once and highlighted when its language has loaded: wait for that before a screenshot. */
async function highlighted(page: Page): Promise<void> {
  await page.waitForFunction(() => [...document.querySelectorAll<HTMLElement>("#messages .markdown pre > code")].every((code) => code.dataset.highlighted !== undefined));
}

const piStore = () => stores.find((store) => store.agent === "pi")!;
const sampleStore = () => stores.find((store) => store.samples === true)!;

test("the viewer opens the user's newest session; the samples are listed after the user's, under their own heading", async ({ page }, testInfo) => {
  expect(stores.map((store) => [store.agent ?? null, store.samples ?? false])).toEqual([
    ["pi", false],
    [null, true],
  ]);
  const mine = await usersSessions();
  expect(mine).toHaveLength(NEWER.length + 1);
  const newest = mine[0]!;

  await openServed(page);
  expect(openSession(page)).toEqual({ store: piStore().id, session: newest.path });
  await expect(page.locator("#session-header h1")).toHaveText(newest.name ?? `Session: ${newest.id}`);
  await expect(page.locator("#messages .entry").first()).toBeVisible();

  // The user's sessions first, newest first; then the heading; then the samples.
  const items = sessionItems(page);
  await expect(items).toHaveCount(mine.length + SAMPLE_STORE_SESSIONS);
  const paths = await items.locator("button").evaluateAll((buttons) => buttons.map((button) => [button.getAttribute("data-store"), button.getAttribute("data-path")]));
  expect(paths.slice(0, mine.length)).toEqual(mine.map((info) => [piStore().id, info.path]));
  expect(paths.slice(mine.length).every(([store]) => store === sampleStore().id)).toBe(true);
  await expect(items.first()).toHaveClass(/selected/);
  const heading = page.locator("#session-list .list-group");
  await expect(heading).toContainText("Samples");
  expect(await heading.evaluate((h) => h.previousElementSibling?.querySelectorAll("li.session").length)).toBe(mine.length);
  expect(await heading.evaluate((h) => h.nextElementSibling?.querySelectorAll("li.session").length)).toBe(SAMPLE_STORE_SESSIONS);

  const shots = process.env.SESSIONKIT_SCREENSHOTS ?? testInfo.outputPath();
  for (const scheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.setViewportSize({ width: 1280, height: 900 });
    await openServed(page);
    await expect(page.locator("#session-header h1")).toHaveText(newest.name ?? `Session: ${newest.id}`);
    // At 1280 px the list is a drawer over the session: opened for the picture.
    await expect(page.locator("#list-pane")).toBeHidden();
    await showSessionList(page);
    await highlighted(page);
    await page.screenshot({ path: join(shots, `user-newest-wide-${scheme}.png`) });

    // On a phone the list starts hidden: the session fills the screen.
    await page.setViewportSize({ width: 390, height: 844 });
    await openServed(page);
    expect(openSession(page).session).toBe(newest.path);
    await expect(page.locator("#list-pane")).toBeHidden();
    await highlighted(page);
    await page.screenshot({ path: join(shots, `user-newest-phone-${scheme}.png`) });
    await page.click("#sessions-toggle");
    await expect(page.locator("#session-list .list-group")).toBeVisible();
    await page.screenshot({ path: join(shots, `user-newest-phone-list-${scheme}.png`) });
  }
});

test("a user whose newest session is older than the samples' newest still gets their own session first", async ({ page }) => {
  // Only the December 2025 session stays: by date alone, the seven built samples (January 2026) are newer.
  const aside = join(home, "aside");
  await mkdir(aside);
  for (const file of NEWER) await rename(join(projectDir, basename(file)), join(aside, basename(file)));
  const [mine] = await usersSessions();
  expect(basename(mine!.path)).toBe(basename(OLDER));

  await openServed(page);
  expect(openSession(page)).toEqual({ store: piStore().id, session: mine!.path });
  const firstSample = sessionItems(page).nth(1);
  await expect(firstSample.locator("button")).toHaveAttribute("data-store", sampleStore().id);
  // The sample listed first is newer than the user's session: the group, not the date, puts it second.
  const sampleDate = await firstSample.locator("time").getAttribute("datetime");
  expect(Date.parse(sampleDate!)).toBeGreaterThan(mine!.modified.getTime());
});
