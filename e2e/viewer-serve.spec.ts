/**
 * The viewer as `npm start` serves it: `sessionkit serve --agent-stores --root samples/store` on
 * a free port, with a temp $HOME holding a pi store (the bundled sample as pi wrote it, images
 * inline, and a small session) and an oh-my-pi store, plus the repository's sample store. The list
 * across the three stores, opening a session, every filter, search in a session and across
 * sessions (the index, kept in the cache dir, not in the agents' folders), deep links over a
 * reload (the tab keeps the token, which left the address), a link to a session (its first bytes
 * asked for as the page starts, the session shown before the list is read), the token never reaching another
 * local server, a second tab from the printed URL, following a session a child
 * process appends to through node-fs, exports (zip, HTML opened from file:// offline), and the
 * server stopping on SIGINT with exit 0.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import { expect, test, type Page } from "@playwright/test";
import { storeCacheDir } from "../cli/store-cache.js";
import { sessionDirFor, sessionFileName } from "../src/session/paths.js";
import {
  SAMPLE_TITLE,
  checkDeepLinks,
  checkExportedSample,
  checkFiltersAndSearch,
  checkSampleSession,
  entries,
  offlinePage,
  readZip,
  sessionItems,
  sessionJsonl,
  settled,
  showSessionList,
  startNpmStart,
  stopNpmStart,
} from "./viewer-helpers.js";

const SAMPLE_ID = "01a1fdb6-afa5-7759-826c-c53a82e15421";
/** The sample store's sessions (scripts/build-samples.ts). */
const SAMPLE_STORE_SESSIONS = 8;

let home: string;
let cache: string;
let piRoot: string;
let ompRoot: string;
let serve: ChildProcess;
let serveUrl: URL;
let stores: { id: string; label: string; agent?: string }[];
/** The zebras session's storage path in the pi store. */
let zebrasPath: string;

/** Writes a session file where pi puts it: sessions/--<cwd>--/<time>_<id>.jsonl. */
async function putSession(root: string, text: string): Promise<string> {
  const header = JSON.parse(text.slice(0, text.indexOf("\n"))) as { id: string; timestamp: string; cwd: string };
  const path = join(sessionDirFor(header.cwd), sessionFileName(header.timestamp, header.id));
  await mkdir(join(root, sessionDirFor(header.cwd)), { recursive: true });
  await writeFile(join(root, path), text);
  return path;
}

test.describe.configure({ mode: "serial" });

test.beforeAll(async () => {
  // The first run in a fresh checkout builds the CLI and the sample store.
  test.setTimeout(600_000);
  home = await mkdtemp(join(tmpdir(), "sessionkit-serve-e2e-"));
  cache = join(home, ".cache");
  piRoot = join(home, ".pi", "agent");
  ompRoot = join(home, ".omp", "agent");
  await putSession(piRoot, await readFile("web-demo/src/samples/pi-sample.jsonl", "utf8"));
  zebrasPath = await putSession(piRoot, sessionJsonl("e2e-serve-zebras", [["Where do zebras sleep?", "Zebras sleep standing up, in short naps."]]));
  await putSession(ompRoot, sessionJsonl("e2e-serve-omp", [["Which agent wrote this one?", "oh-my-pi wrote it."]]));

  ({ process: serve, url: serveUrl } = await startNpmStart({ HOME: home, XDG_CACHE_HOME: cache }));
  stores = (await (await fetch(new URL(`/api/stores${serveUrl.search}`, serveUrl))).json()) as typeof stores;
});

test.afterAll(async () => {
  await stopNpmStart(serve);
  await rm(home, { recursive: true, force: true });
});

/** Opens the printed URL (the tab keeps its token) with `hash`, and waits until the viewer is done. */
async function openServed(page: Page, hash = ""): Promise<void> {
  await page.goto(serveUrl.href + hash);
  await settled(page);
}

async function openSample(page: Page): Promise<void> {
  await openServed(page);
  await showSessionList(page);
  await page.locator("#session-list button", { hasText: SAMPLE_TITLE }).click();
  await settled(page);
}

const storeOf = (agent: string) => stores.find((store) => store.agent === agent)!;

/** The Content Security Policy errors `page` logs from now on. */
function cspViolations(page: Page): string[] {
  const violations: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error" && /Content Security Policy/.test(message.text())) violations.push(message.text());
  });
  return violations;
}

/** Records, in every page `page` loads, the /api/ paths it had asked for when its first entry arrived; the returned function reads them. */
async function watchApiAtFirstEntry(page: Page): Promise<() => Promise<string[]>> {
  await page.addInitScript(() => {
    new MutationObserver((_, observer) => {
      if (!document.querySelector("#messages .entry")) return;
      observer.disconnect();
      (window as unknown as { apiAtFirstEntry?: string[] }).apiAtFirstEntry = performance
        .getEntriesByType("resource")
        .map((entry) => decodeURIComponent(new URL(entry.name).pathname))
        .filter((path) => path.startsWith("/api/"));
    }).observe(document, { childList: true, subtree: true });
  });
  return () => page.evaluate(() => (window as unknown as { apiAtFirstEntry: string[] }).apiAtFirstEntry);
}

test("the list across stores: each store by agent and place, every session of each, filtered by store and as you type", async ({ page }) => {
  expect(stores.map((store) => [store.agent ?? null, store.label])).toEqual([
    ["pi", "pi ~/.pi/agent"],
    ["omp", "omp ~/.omp/agent"],
    [null, expect.stringMatching(/\/samples\/store$/)],
  ]);
  await openServed(page);
  // The tab keeps the token: it is not left in the address for links and history.
  await expect(page).not.toHaveURL(/token=/);
  await expect(page.locator("#served-by")).toHaveText("sessionkit serve · 3 stores · read-only");
  await showSessionList(page);
  const total = 3 + SAMPLE_STORE_SESSIONS;
  await expect(page.locator("#store-filter option")).toHaveText([`All 3 stores (${total})`, "pi ~/.pi/agent (2)", "omp ~/.omp/agent (1)", new RegExp(`/samples/store \\(${SAMPLE_STORE_SESSIONS}\\)$`)]);
  await expect(sessionItems(page)).toHaveCount(total);
  await expect(sessionItems(page).filter({ hasText: "Which agent wrote this one?" })).toContainText("omp ~/.omp/agent");

  await page.selectOption("#store-filter", storeOf("pi").id);
  await expect(sessionItems(page)).toHaveCount(2);
  await page.fill("#session-filter", "zebras");
  await expect(sessionItems(page)).toHaveText([/Where do zebras sleep\?/]);
  await expect(page.locator(".list-count")).toHaveText("1 of 11 sessions");
  await sessionItems(page).locator("button").click();
  await settled(page);
  await expect(entries(page).last()).toContainText("Zebras sleep standing up");
});

test("while the server lists the stores (a first listing of large ones takes seconds), the list and the page say so; the newest session opens once it is done", async ({ page }) => {
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  await page.route("**/api/stores/*/sessions", async (route) => {
    await held;
    await route.continue();
  });
  await page.goto(serveUrl.href);
  await expect(page.locator("#session-list")).toContainText("Listing sessions…");
  await expect(page.locator("[role=status]", { hasText: "Listing sessions…" })).toBeVisible();
  release();
  await settled(page);
  await expect(page.locator("#session-list")).not.toContainText("Listing sessions…");
  await expect(page.locator(".list-count")).toHaveText(`${3 + SAMPLE_STORE_SESSIONS} of ${3 + SAMPLE_STORE_SESSIONS} sessions`);
  await expect(entries(page).first()).toBeVisible();
});

test("opening a session: the sample's header figures, every filter, search in the session", async ({ page }) => {
  await openSample(page);
  await checkSampleSession(page);
  // As pi wrote it: the images are inline, shown from data: URLs.
  await expect(page.locator("#messages .tool-images img")).toHaveAttribute("src", /^data:image\/png;base64,/);
  await checkFiltersAndSearch(page);
});

test("deep links survive a reload: the token the tab kept (sessionStorage) authenticates the page", async ({ page }) => {
  await openSample(page);
  await checkDeepLinks(page);
  await expect(page).not.toHaveURL(/token=/);
});

test("a link to a session: its first bytes are asked for as the page starts (its size too when they may not be all of it), before the app opens its WebSocket, and loading asks nothing more; it is shown before the list is read", async ({ page }) => {
  const requests: string[] = [];
  page.on("request", (request) => {
    if (request.url().includes("/files/")) requests.push(`${request.method()} ${decodeURIComponent(new URL(request.url()).pathname)} ${request.headers()["range"] ?? ""}`.trim());
  });
  page.on("websocket", () => requests.push("websocket"));
  await page.addInitScript(() => {
    const page = window as unknown as { atFirstEntry?: { listed: number; fileReads: number } };
    new MutationObserver((_, observer) => {
      if (!document.querySelector("#messages .entry")) return;
      observer.disconnect();
      const fileReads = performance.getEntriesByType("resource").filter((entry) => entry.name.includes("/files/")).length;
      page.atFirstEntry = { listed: document.querySelectorAll("#session-list li").length, fileReads };
    }).observe(document, { childList: true, subtree: true });
  });
  const store = storeOf("pi").id;
  await openServed(page, `#${new URLSearchParams({ store, session: zebrasPath }).toString()}`);
  await expect(entries(page).last()).toContainText("Zebras sleep standing up");
  const file = `/api/stores/${store}/files/${zebrasPath}`;
  // Shorter than the bytes asked for: the whole file, its size known without a HEAD.
  expect(requests[0]).toBe(`GET ${file} bytes=0-1048575`);
  expect(requests.indexOf("websocket")).toBeGreaterThan(0);
  expect(requests.filter((request) => request.startsWith("HEAD"))).toEqual([]);
  const atFirstEntry = await page.evaluate(() => (window as unknown as { atFirstEntry: { listed: number; fileReads: number } }).atFirstEntry);
  expect(atFirstEntry).toEqual({ listed: 0, fileReads: 1 });
  await showSessionList(page);
  await expect(sessionItems(page)).toHaveCount(3 + SAMPLE_STORE_SESSIONS);
});

test("the page's inline boot script asks for the stores and the linked session while the app's first script is still on its way, each once; the page's policy allows it by its hash and refuses any other inline script or style", async ({ page }) => {
  const asked: string[] = [];
  page.on("request", (request) => {
    const path = decodeURIComponent(new URL(request.url()).pathname);
    if (path.startsWith("/api/")) asked.push(`${request.method()} ${path}`);
  });
  const violations = cspViolations(page);
  // The app's first script is held until both requests were made: only the boot script can make them.
  const store = storeOf("pi").id;
  const file = `/api/stores/${store}/files/${zebrasPath}`;
  let askedBeforeApp = false;
  const apiAtFirstEntry = await watchApiAtFirstEntry(page);
  await page.route(/\/assets\/app-[^/]*\.js$/, async (route) => {
    const deadline = Date.now() + 5000;
    while (!(asked.includes("GET /api/stores") && asked.includes(`GET ${file}`)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    askedBeforeApp = asked.includes("GET /api/stores") && asked.includes(`GET ${file}`);
    await route.continue();
  });
  await openServed(page, `#${new URLSearchParams({ store, session: zebrasPath }).toString()}`);
  await expect(entries(page).last()).toContainText("Zebras sleep standing up");
  expect(askedBeforeApp).toBe(true);
  // The app took the boot script's requests instead of making its own (the list, read after the first entry, reads the file again).
  expect(await apiAtFirstEntry()).toEqual(["/api/stores", file]);
  expect(violations).toEqual([]);
  // The header's policy allows the page's two inline scripts (its entry and the boot script) and its stylesheet by their hashes, and nothing inline besides.
  const served = await page.request.get(serveUrl.href);
  const policy = served.headers()["content-security-policy"]!;
  expect(policy).toMatch(/script-src 'self' 'wasm-unsafe-eval' 'sha256-[A-Za-z0-9+/]+=*' 'sha256-[A-Za-z0-9+/]+=*';/);
  expect(policy).toMatch(/style-src 'self' 'sha256-[A-Za-z0-9+/]+=*';/);
  expect(policy).not.toContain("unsafe-inline");
  const refused = await page.evaluate(async () => {
    const seen = new Promise<string>((resolve) => document.addEventListener("securitypolicyviolation", (event) => resolve(event.violatedDirective), { once: true }));
    const script = document.createElement("script");
    script.textContent = "window.injectedRan = true;";
    document.head.append(script);
    return { directive: await seen, ran: (window as unknown as { injectedRan?: boolean }).injectedRan === true };
  });
  expect(refused).toEqual({ directive: "script-src-elem", ran: false });
  const restyled = await page.evaluate(async () => {
    const seen = new Promise<string>((resolve) => document.addEventListener("securitypolicyviolation", (event) => resolve(event.violatedDirective), { once: true }));
    const style = document.createElement("style");
    style.textContent = "body { display: none !important; }";
    document.head.append(style);
    return { directive: await seen, display: getComputedStyle(document.body).display };
  });
  expect(restyled).toEqual({ directive: "style-src-elem", display: "block" });
});

test("with the stores and the session already in when the app's script arrives, the app renders after the document has finished parsing (DOMContentLoaded first), not inside it", async ({ page }) => {
  const finished: string[] = [];
  page.on("requestfinished", (request) => finished.push(decodeURIComponent(new URL(request.url()).pathname)));
  const store = storeOf("pi").id;
  const file = `/api/stores/${store}/files/${zebrasPath}`;
  let answeredBeforeApp = false;
  // The app's script is held until the boot script's two answers are in (and a moment for it to read them).
  await page.route(/\/assets\/app-[^/]*\.js$/, async (route) => {
    const deadline = Date.now() + 5000;
    while (!(finished.includes("/api/stores") && finished.includes(file)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    answeredBeforeApp = finished.includes("/api/stores") && finished.includes(file);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await route.continue();
  });
  await page.addInitScript(() => {
    const state = window as unknown as { parsedAtFirstEntry?: boolean; parsed?: boolean };
    document.addEventListener("DOMContentLoaded", () => (state.parsed = true));
    new MutationObserver((_, observer) => {
      if (!document.querySelector("#messages .entry")) return;
      observer.disconnect();
      state.parsedAtFirstEntry = state.parsed === true;
    }).observe(document, { childList: true, subtree: true });
  });
  await openServed(page, `#${new URLSearchParams({ store, session: zebrasPath }).toString()}`);
  await expect(entries(page).last()).toContainText("Zebras sleep standing up");
  expect(answeredBeforeApp).toBe(true);
  expect(await page.evaluate(() => (window as unknown as { parsedAtFirstEntry?: boolean }).parsedAtFirstEntry)).toBe(true);
});

test("without the boot script (a page whose policy refuses it) the app asks for the stores and the linked session itself, once each", async ({ page }) => {
  const violations = cspViolations(page);
  // The page as served, its boot script changed by one byte: its hash no longer matches the policy's.
  await page.route((url) => url.pathname === "/", async (route) => {
    const response = await route.fetch();
    const body = (await response.text()).replace(/<script>\(function\(\)\{/, "<script>(function() {");
    expect(body).toContain("<script>(function() {");
    await route.fulfill({ response, body });
  });
  const apiAtFirstEntry = await watchApiAtFirstEntry(page);
  const store = storeOf("pi").id;
  await openServed(page, `#${new URLSearchParams({ store, session: zebrasPath }).toString()}`);
  await expect(entries(page).last()).toContainText("Zebras sleep standing up");
  // Refused (by the header's policy and the meta tag's, each reporting it).
  expect(violations.length).toBeGreaterThan(0);
  for (const violation of violations) expect(violation).toMatch(/^Executing inline script violates/);
  expect(await apiAtFirstEntry()).toEqual(["/api/stores", `/api/stores/${store}/files/${zebrasPath}`]);
});

test("the token stays with its server: another server on 127.0.0.1 gets no cookie and no token from the browser", async ({ browser }) => {
  const token = serveUrl.searchParams.get("token")!;
  const received: { path: string; headers: Record<string, string | string[] | undefined> }[] = [];
  const other = createServer((request, response) => {
    received.push({ path: request.url ?? "", headers: request.headers });
    response.writeHead(200, { "Content-Type": "text/html" });
    response.end("<!doctype html><title>another local service</title>");
  });
  await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
  const otherOrigin = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await openServed(page);
    await expect(page.locator("#served-by")).toContainText("3 stores");
    // What a page of that service (or any page requesting it) makes the browser send: a navigation, a credentialed fetch, an image.
    await page.goto(`${otherOrigin}/page`);
    await page.evaluate(async () => {
      await fetch("/fetched", { credentials: "include" });
      const image = new Image();
      image.src = "/image";
      await new Promise((resolve) => (image.onload = image.onerror = resolve));
    });
    expect(received.map(({ path }) => path)).toEqual(expect.arrayContaining(["/page", "/fetched", "/image"]));
    expect(received.map(({ headers }) => headers.cookie ?? null)).toEqual(received.map(() => null));
    for (const { headers } of received) expect(JSON.stringify(headers)).not.toContain(token);
    expect(await context.cookies()).toEqual([]);
  } finally {
    await context.close();
    await new Promise((resolve) => other.close(resolve));
  }
});

test("a second tab from the printed URL and a reload stay signed in; a tab without the token asks for the printed URL", async ({ browser }) => {
  const context = await browser.newContext();
  try {
    const first = await context.newPage();
    await openServed(first);
    const second = await context.newPage();
    await openServed(second);
    await expect(second.locator("#served-by")).toContainText("3 stores");
    await first.reload();
    await settled(first);
    await expect(first.locator("#served-by")).toContainText("3 stores");
    expect(first.url()).not.toContain("token=");
  } finally {
    await context.close();
  }
  for (const address of [serveUrl.origin + "/", `${serveUrl.origin}/?token=not-the-token`]) {
    const fresh = await browser.newContext();
    try {
      const page = await fresh.newPage();
      await page.goto(address);
      await expect(page.locator("#token-needed")).toContainText("open the URL sessionkit serve printed");
      await expect(page).not.toHaveURL(/token=/);
    } finally {
      await fresh.close();
    }
  }
});

test("search across sessions: the server searches each store, its index kept in the cache dir; hits open at their entry; tool output only when asked", async ({ page }) => {
  const asked: string[] = [];
  page.on("request", (request) => asked.push(new URL(request.url()).pathname));
  await openServed(page);
  await showSessionList(page);
  const hits = page.locator("#global-results .search-hit");
  await page.fill("#global-search", "zebras sleep");
  await page.press("#global-search", "Enter");
  await settled(page);
  await expect(hits).toHaveCount(2);
  // The words found are marked in each hit's text.
  await expect(hits.filter({ hasText: "standing up" }).locator(".hit-snippet mark")).toHaveText(["Zebras", "sleep"]);
  await hits.filter({ hasText: "standing up" }).locator("button").click();
  await settled(page);
  await expect(page.locator("#messages .entry.target")).toContainText("Zebras sleep standing up, in short naps.");
  expect(new URLSearchParams(new URL(page.url()).hash.slice(1)).get("target")).toBe("a0");

  await showSessionList(page);
  await page.fill("#global-search", '"Tests: 1 failed"');
  await page.press("#global-search", "Enter");
  await settled(page);
  await expect(hits).toHaveCount(0);
  await page.check("#global-include-tools");
  await page.press("#global-search", "Enter");
  await settled(page);
  await expect(hits.first()).toContainText("Tests: 1 failed");
  await hits.first().locator("button").click();
  await settled(page);
  await expect(page.locator("#session-header h1")).toHaveText(SAMPLE_TITLE);
  // A tool result is shown with its call: that entry is the target, its output in full.
  await expect(page.locator("#messages .entry.target .tool-output")).toContainText("Tests: 1 failed");

  // The server searched: the page loaded no SQLite and read no session file for it.
  // Three searches (Enter pressed three times), each asked of the three stores.
  expect(asked.filter((path) => path.endsWith("/search"))).toHaveLength(9);
  expect(asked.filter((path) => /sqlite/.test(path))).toEqual([]);
  // The indexes are in the user's cache (serve mounts it over each store), one per store and
  // source group; nothing was written into the agents' folders.
  for (const root of [piRoot, ompRoot]) {
    const kit = join(storeCacheDir(root, { XDG_CACHE_HOME: cache }, home), "search");
    expect((await readdir(kit)).sort()).toEqual(["more.sqlite", "text.sqlite"]);
    expect(existsSync(join(root, ".sessionkit"))).toBe(false);
  }
});

test("follow mode: a child process appends through node-fs; every entry is on screen within 1 s of its flush; scrolling up pauses, the button resumes", async ({ page }) => {
  const writer = spawn(process.execPath, ["--import", "tsx", "test/node/fixtures/fs-writer.ts", piRoot, String(64 << 10), "15", "200", "2"], { stdio: ["pipe", "pipe", "inherit"] });
  const printed: string[] = [];
  const lines = createInterface({ input: writer.stdout! });
  const printedCount = (n: number) => expect.poll(() => printed.length, { timeout: 20_000 }).toBeGreaterThanOrEqual(n);
  lines.on("line", (line) => printed.push(line));
  try {
    await printedCount(1);
    const { path } = JSON.parse(printed[0]!) as { path: string };
    await openServed(page, `#store=${storeOf("pi").id}&session=${encodeURIComponent(path)}`);
    await page.click("#action-follow");
    await expect(page.locator("#action-follow")).toHaveAttribute("aria-pressed", "true");
    // When each entry is first in the DOM (the list renders what is in view: following keeps the end in view).
    await page.evaluate(() => {
      const seen: Record<string, number> = {};
      (window as unknown as { seen: typeof seen }).seen = seen;
      new MutationObserver(() => {
        for (const entry of document.querySelectorAll("#messages .entry[data-entry-id]")) seen[entry.getAttribute("data-entry-id")!] ??= Date.now();
      }).observe(document.querySelector("#messages")!, { childList: true, subtree: true });
    });

    writer.stdin!.write("go\n");
    await printedCount(16);
    const flushed = printed.slice(1, 16).map((line) => JSON.parse(line) as { id: string; flushedAt: number });
    const seenAt = async () => page.evaluate(() => (window as unknown as { seen: Record<string, number> }).seen);
    await expect.poll(async () => {
      const seen = await seenAt();
      return flushed.filter(({ id }) => seen[id] === undefined).length;
    }, { timeout: 10_000 }).toBe(0);
    const seen = await seenAt();
    const delays = flushed.map(({ id, flushedAt }) => seen[id]! - flushedAt).sort((a, b) => a - b);
    console.log(`follow over serve: 15 entries on screen after their flush: median ${delays[7]} ms, max ${delays[14]} ms`);
    for (const delay of delays) expect(delay).toBeLessThanOrEqual(1000);
    await expect(entries(page).last()).toContainText("live message 14");

    // Scrolled up: the next entries arrive without moving the view; the bar counts them.
    const messages = page.locator("#messages");
    await messages.evaluate((m) => m.scrollBy(0, -400));
    await messages.dispatchEvent("scroll");
    const top = await messages.evaluate((m) => m.scrollTop);
    writer.stdin!.write("go\n");
    await printedCount(31);
    const bar = page.locator("#follow-bar");
    await expect(bar.locator("button")).toHaveText("↓ 15 new");
    expect(await messages.evaluate((m) => m.scrollTop)).toBe(top);
    await expect(page.locator("#messages")).not.toContainText("live message 29");
    await bar.locator("button").click();
    await expect(entries(page).last()).toContainText("live message 29");
    await expect(entries(page).last()).toBeInViewport();
  } finally {
    writer.stdin!.end();
    if (writer.exitCode === null) await once(writer, "exit");
  }
});

test("exports: the session as a zip, and as an HTML file that opens from file:// with the network blocked", async ({ page, browser }) => {
  const dir = await mkdtemp(join(tmpdir(), "sessionkit-serve-export-"));
  try {
    await openSample(page);
    const [zip] = await Promise.all([page.waitForEvent("download"), page.click("#action-export-zip")]);
    expect(zip.suggestedFilename()).toBe(`session-${SAMPLE_ID}.zip`);
    const members = await readZip(await zip.path());
    const manifest = JSON.parse(members.get("manifest.json")!) as { sessions: { id: string }[] };
    expect(manifest.sessions.map((session) => session.id)).toEqual([SAMPLE_ID]);
    expect([...members.keys()].some((name) => name.startsWith("sessions/"))).toBe(true);

    const [html] = await Promise.all([page.waitForEvent("download"), page.click("#action-export-html")]);
    const out = join(dir, "served.html");
    await html.saveAs(out);
    const offline = await offlinePage(browser);
    await checkExportedSample(offline.page, pathToFileURL(out).href);
    expect(offline.requests).toEqual([]);
    await offline.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
