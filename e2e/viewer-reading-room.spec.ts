/**
 * The viewer as a reading room, measured in Chromium over `npm start` (sessionkit serve on a temp
 * $HOME's pi store) and in the HTML export from file://: how many pixels of the window the
 * messages get once the header has collapsed to its line (≥ 820 of 900 at 1280×900, ≥ 760 of 844
 * on a 390×844 phone) and how wide the message column is (≥ 760 px at 1280 in serve, the list
 * being a drawer below 1500 px, the choice remembered); the details expanding on demand; load
 * notices in a one-line strip that can be dismissed; images at their natural size and zoomed
 * (scaled up) over a dark backdrop; the tree marking the viewed leaf and path, 55 rows and more
 * at 900 px, and following the reading position; a growing session followed while the view is
 * at the bottom, counted by the "N new" chip while scrolled up, and Follow moving to the newest
 * leaf on another branch. The figures are printed.
 */
import { execFile, type ChildProcess } from "node:child_process";
import { appendFile, copyFile, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { expect, test, type Page } from "@playwright/test";
import { entries, sessionJsonl, settled, showSessionList, startNpmStart, stopNpmStart, treeRow } from "./viewer-helpers.js";

const run = promisify(execFile);
const CORPUS = "test/fixtures/corpus";
/** 57 entries, five screenshots (415×409 and 197×426 px) in tool results. */
const IMAGES = `${CORPUS}/hassanad94__dotfiles/2026-05-11T16-45-25-267Z_019e17ed-dd93-72ed-8a55-e44bfa9d2253.jsonl`;
/** 1,019 entries. */
const LARGE = `${CORPUS}/badlogic__pi-mono/large-session.jsonl`;
const SAMPLE = "web-demo/src/samples/pi-sample.jsonl";
const PROJECT = "sessions/--home-e2e-reading--";

let home: string;
let serve: ChildProcess;
let serveUrl: URL;
let piStore: string;
let exports: { images: string; notices: string };

/** A version 1 session (no ids: migrated on load) with a torn line in the middle: the viewer has two notices about it. */
function v1SessionWithTornLine(): string {
  const lines = sessionJsonl("e2e-v1-torn", Array.from({ length: 30 }, (_, i): [string, string] => [`question ${i}`, `answer ${i}\n\n${"A line of the answer.\n".repeat(4)}`]))
    .trim()
    .split("\n")
    .map((line) => {
      const record = JSON.parse(line) as Record<string, unknown>;
      if (record.type === "session") delete record.version;
      else {
        delete record.id;
        delete record.parentId;
      }
      return JSON.stringify(record);
    });
  lines.splice(20, 0, lines[20]!.slice(0, 40));
  return lines.join("\n") + "\n";
}

test.describe.configure({ mode: "serial" });

test.beforeAll(async () => {
  test.setTimeout(600_000);
  home = await mkdtemp(join(tmpdir(), "sessionkit-reading-room-"));
  const dir = join(home, ".pi", "agent", PROJECT);
  await mkdir(dir, { recursive: true });
  for (const file of [IMAGES, LARGE, SAMPLE]) await copyFile(file, join(dir, basename(file)));
  await writeFile(join(dir, "v1-torn.jsonl"), v1SessionWithTornLine());
  ({ process: serve, url: serveUrl } = await startNpmStart({ HOME: home, XDG_CACHE_HOME: join(home, ".cache") }));
  const stores = (await (await fetch(new URL(`/api/stores${serveUrl.search}`, serveUrl))).json()) as { id: string; agent?: string }[];
  piStore = stores.find((store) => store.agent === "pi")!.id;
  exports = { images: join(home, "images.html"), notices: join(home, "notices.html") };
  await run("npx", ["tsx", "cli/main.ts", "export", "--html", IMAGES, "-o", exports.images]);
  await run("npx", ["tsx", "cli/main.ts", "export", "--html", join(dir, "v1-torn.jsonl"), "-o", exports.notices, "--no-redact"]); // as stored: redaction would re-encode the damaged file
});

test.afterAll(async () => {
  await stopNpmStart(serve);
  await rm(home, { recursive: true, force: true });
});

const served = (file: string) => `${serveUrl.href}#store=${piStore}&session=${encodeURIComponent(`${PROJECT}/${file}`)}`;

async function open(page: Page, url: string, viewport: { width: number; height: number }): Promise<void> {
  await page.setViewportSize(viewport);
  await page.goto(url);
  await settled(page);
  await expect(entries(page).first()).toBeVisible();
}

interface Room {
  /** Window height, and the part of it below the header's line where messages show. */
  window: number;
  messages: number;
  /** The header's line (and strip) stuck over the messages. */
  bar: number;
  /** A message's width. */
  column: number;
}

/** Once the view has scrolled past the details (it opens at the leaf, at the end): the heights and the column. */
async function measure(page: Page): Promise<Room> {
  await expect(page.locator("#session-header")).toHaveClass(/scrolled/);
  return page.evaluate(() => {
    const messages = document.querySelector("#messages")!.getBoundingClientRect();
    const bar = document.querySelector("#session-header .header-bar")!.getBoundingClientRect();
    const entry = document.querySelector("#messages .entry:not(.model-change)")!.getBoundingClientRect();
    return { window: window.innerHeight, messages: Math.round(messages.bottom - bar.bottom), bar: Math.round(bar.height), column: Math.round(entry.width) };
  });
}

const report = (what: string, room: Room) => console.log(`reading room, ${what}: messages ${room.messages} of ${room.window} px (header line ${room.bar} px), column ${room.column} px`);

test("served at 1280×900 and on a 390×844 phone: the header collapses to one line, expands on demand; the list is a drawer, remembered", async ({ page }) => {
  await open(page, served(basename(IMAGES)), { width: 1280, height: 900 });
  const wide = await measure(page);
  report("serve 1280×900", wide);
  expect(wide.messages).toBeGreaterThanOrEqual(820);
  expect(wide.column).toBeGreaterThanOrEqual(760);
  // The list is a drawer at 1280: closed, and over the session when opened (the column keeps its width).
  await expect(page.locator("#list-pane")).toBeHidden();

  // Details on demand: pinned under the line without moving the reading position.
  const details = page.locator("#header-details");
  const top = await page.locator("#messages").evaluate((m) => m.scrollTop);
  await expect(details).not.toBeInViewport();
  await page.click("#header-toggle");
  await expect(page.locator("#header-toggle")).toHaveAttribute("aria-expanded", "true");
  await expect(details).toBeInViewport();
  await expect(page.locator("#action-jsonl")).toBeInViewport();
  expect(await page.locator("#messages").evaluate((m) => m.scrollTop)).toBe(top);
  await page.click("#header-toggle");
  await expect(details).not.toBeInViewport();

  await showSessionList(page);
  expect((await measure(page)).column).toBe(wide.column);
  await page.click("#list-pin");
  await page.reload();
  await settled(page);
  await expect(page.locator("#list-pane")).toBeVisible();
  const docked = await measure(page);
  report("serve 1280×900, list pinned beside", docked);
  await page.click("#list-pin");
  await page.reload();
  await settled(page);
  await expect(page.locator("#list-pane")).toBeHidden();
  // Wide enough, the list is beside the session unless the reader chose otherwise.
  await page.evaluate(() => localStorage.clear());
  await open(page, served(basename(IMAGES)), { width: 1600, height: 900 });
  await expect(page.locator("#list-pane")).toBeVisible();
  const roomy = await measure(page);
  report("serve 1600×900, list beside", roomy);
  expect(roomy.column).toBeGreaterThanOrEqual(760);

  await open(page, served(basename(IMAGES)), { width: 390, height: 844 });
  const phone = await measure(page);
  report("serve 390×844", phone);
  expect(phone.messages).toBeGreaterThanOrEqual(760);
});

test("the HTML export at 1280×900 and 390×844; load notices in a one-line strip that is dismissed", async ({ page }) => {
  await open(page, pathToFileURL(exports.images).href, { width: 1280, height: 900 });
  const wide = await measure(page);
  report("export 1280×900", wide);
  expect(wide.messages).toBeGreaterThanOrEqual(820);
  await open(page, pathToFileURL(exports.images).href, { width: 390, height: 844 });
  const phone = await measure(page);
  report("export 390×844", phone);
  expect(phone.messages).toBeGreaterThanOrEqual(760);

  for (const [mode, url] of [
    ["export", pathToFileURL(exports.notices).href],
    ["serve", served("v1-torn.jsonl")],
  ] as const) {
    await open(page, url, { width: 1280, height: 900 });
    const strip = page.locator("#notices-strip");
    await expect(strip).toContainText("1 line(s) not read as written");
    await expect(strip).toContainText("Stored as version 1");
    const withNotices = await measure(page);
    report(`${mode} 1280×900, notices shown`, withNotices);
    // One line: the strip adds no more than that to the header's line.
    expect((await strip.boundingBox())!.height).toBeLessThanOrEqual(24);
    await page.click("#notices-dismiss");
    await expect(strip).toHaveCount(0);
    const dismissed = await measure(page);
    report(`${mode} 1280×900, notices dismissed`, dismissed);
    expect(dismissed.messages).toBeGreaterThanOrEqual(820);
  }
});

test("images inline at their natural size; the zoom scales small ones up over a dark backdrop", async ({ page }) => {
  await open(page, served(basename(IMAGES)), { width: 1280, height: 900 });
  await page.click('.filter-btn[data-filter="all"]');
  await treeRow(page, "image-import-9.png").click();
  const image = page.locator("#messages .entry.target .tool-images img");
  await expect.poll(() => image.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(197);
  const inline = await image.evaluate((img: HTMLImageElement) => ({ width: img.getBoundingClientRect().width, natural: img.naturalWidth }));
  console.log(`image inline: ${inline.width} px wide, natural ${inline.natural} px`);
  expect(inline.width).toBe(inline.natural);

  await image.click();
  const zoomed = page.locator("#image-modal img");
  await expect(zoomed).toBeVisible();
  // The zoomed image is laid out at its natural size until it has loaded, then scaled.
  await expect.poll(() => zoomed.evaluate((img: HTMLImageElement) => img.complete && Math.round(img.getBoundingClientRect().height))).toBe(Math.round(900 * 0.88));
  const modal = await page.locator("#image-modal").evaluate((m) => ({ backdrop: getComputedStyle(m).backgroundColor, width: m.querySelector("img")!.getBoundingClientRect().width, height: m.querySelector("img")!.getBoundingClientRect().height }));
  console.log(`image zoomed: ${Math.round(modal.width)}×${Math.round(modal.height)} px, backdrop ${modal.backdrop}`);
  expect(modal.backdrop).toBe("rgba(0, 0, 0, 0.92)");
  // 197×426 px in a 1280×900 window: scaled up until the height fills 88 % of it.
  expect(Math.round(modal.height)).toBe(Math.round(900 * 0.88));
  await expect(page.locator("#image-modal")).toContainText("197 × 426 px, shown at 186%");
  await expect(page.locator(".image-modal-close")).toBeFocused();
  await page.keyboard.press("Escape");
  await expect(page.locator("#image-modal")).toHaveCount(0);
  await expect(page.locator("#messages .entry.target .image-zoom")).toBeFocused();
});

test("the tree: the viewed leaf marked and its path shaded, on open and as the reader moves; 55 rows and more at 900 px; it follows the reading position", async ({ page }) => {
  await open(page, served(basename(SAMPLE)), { width: 1280, height: 900 });
  const leaf = page.locator("#tree .tree-node.leaf");
  await expect(leaf).toHaveCount(1);
  await expect(leaf).toHaveAttribute("aria-current", "location");
  await expect(leaf).toContainText("The README now says");
  const shades = await page.evaluate(() => {
    const colour = (selector: string) => getComputedStyle(document.querySelector(selector)!).backgroundColor;
    return { path: colour("#tree .tree-node.in-path:not(.active):not(.leaf)"), off: colour("#tree .tree-node:not(.in-path)") };
  });
  expect(shades.path).not.toBe(shades.off);
  const pathRows = await page.locator("#tree .tree-node.in-path").count();
  expect(pathRows).toBeGreaterThan(5);

  await treeRow(page, "Add a test for the day daylight").click();
  await expect(leaf).toContainText("assistant: Added `due-date.dst.test.ts`");
  await expect(page.locator("#tree .tree-node.in-path", { hasText: "The README now says" })).toHaveCount(0);

  await open(page, served(basename(LARGE)), { width: 1280, height: 900 });
  const rows = await page.evaluate(() => {
    const tree = document.querySelector("#tree")!.getBoundingClientRect();
    return [...document.querySelectorAll("#tree .tree-node")].filter((row) => {
      const box = row.getBoundingClientRect();
      return box.top >= tree.top && box.bottom <= tree.bottom;
    }).length;
  });
  console.log(`tree at 1280×900: ${rows} rows in view`);
  expect(rows).toBeGreaterThanOrEqual(55);

  // Reading elsewhere: the tree marks the entry at the top of the messages and scrolls to it.
  const reading = page.locator("#tree .tree-node.reading");
  for (const fraction of [0, 0.5]) {
    await page.locator("#messages").evaluate((m, f) => (m.scrollTop = (m.scrollHeight - m.clientHeight) * f), fraction);
    await expect(reading).toBeInViewport();
    const atTop = await page.evaluate(() => {
      const bar = document.querySelector("#session-header .header-bar")!.getBoundingClientRect().bottom;
      const first = [...document.querySelectorAll<HTMLElement>("#messages .entry")].find((entry) => entry.getBoundingClientRect().bottom > bar + 8);
      return first?.dataset.entryId;
    });
    const marked = await reading.getAttribute("data-entry-id");
    // The entry itself, or (when the filter hides it) the nearest entry above it that the tree lists.
    expect(await page.evaluate(([a, b]) => a === b || document.querySelector(`#messages .entry[data-entry-id="${b}"]`) !== null, [atTop, marked])).toBe(true);
  }
});

test("live: the viewed leaf of a growing session is followed at the bottom; scrolled up, the chip counts; Follow moves to a new branch", async ({ page }) => {
  const dir = join(home, ".pi", "agent", PROJECT);
  const file = join(dir, "growing.jsonl");
  const turns = Array.from({ length: 12 }, (_, i): [string, string] => [`question ${i}`, `answer ${i}\n\n${"A line of the answer.\n".repeat(5)}`]);
  await writeFile(file, sessionJsonl("e2e-growing", turns));
  let parent = "a11";
  let n = 0;
  const append = async (count: number, from = parent) => {
    const t = new Date().toISOString();
    const lines: string[] = [];
    parent = from;
    for (let i = 0; i < count; i++, n++) {
      lines.push(JSON.stringify({ type: "message", id: `live-q${n}`, parentId: parent, timestamp: t, message: { role: "user", content: `live question ${n}`, timestamp: 1 } }));
      lines.push(JSON.stringify({ type: "message", id: `live-a${n}`, parentId: `live-q${n}`, timestamp: t, message: { role: "assistant", content: [{ type: "text", text: `live answer ${n}\n\n${"More of it.\n".repeat(6)}` }], provider: "p", model: "m", api: "a", stopReason: "stop", timestamp: 2 } }));
      parent = `live-a${n}`;
    }
    await appendFile(file, lines.join("\n") + "\n");
  };

  await open(page, served("growing.jsonl"), { width: 1280, height: 900 });
  await expect(page.locator("#live-state")).toHaveText("● Live");
  await append(1);
  await expect(entries(page).last()).toContainText("live answer 0");
  await expect(entries(page).last()).toBeInViewport();

  const messages = page.locator("#messages");
  await messages.evaluate((m) => m.scrollBy(0, -600));
  await messages.dispatchEvent("scroll");
  // What the reader sees: the first entry below the header's line, and where it is. (Not scrollTop:
  // the list keeps the view in place by moving it when entries above are measured after the scroll.)
  const reading = () =>
    page.evaluate(() => {
      const bar = document.querySelector("#session-header .header-bar")!.getBoundingClientRect().bottom;
      const first = [...document.querySelectorAll<HTMLElement>("#messages .entry")].find((entry) => entry.getBoundingClientRect().bottom > bar + 8)!;
      return `${first.dataset.entryId} at ${Math.round(first.getBoundingClientRect().top)}`;
    });
  const settled = async () => {
    let last = "";
    await expect.poll(async () => (last === (last = await reading()) ? last : "moving")).not.toBe("moving");
    return last;
  };
  const before = await settled();
  await append(3);
  const chip = page.locator("#follow-bar .new-chip");
  await expect(chip).toHaveText("↓ 6 new");
  expect(await settled()).toBe(before);
  await chip.click();
  await expect(entries(page).last()).toContainText("live answer 3");
  await expect(entries(page).last()).toBeInViewport();
  await expect(chip).toHaveCount(0);

  // The file's newest entry on another branch: the view stays on its own; Follow moves to it.
  await append(1, "a5");
  await expect(treeRow(page, "live question 4")).toHaveCount(1);
  await expect(entries(page).last()).toContainText("live answer 3");
  await page.click("#action-follow");
  await expect(page.locator("#action-follow")).toHaveAttribute("aria-pressed", "true");
  await expect(entries(page).last()).toContainText("live answer 4");
  await expect(page.locator("#messages")).not.toContainText("live answer 3");
  await append(1, "a2");
  await expect(entries(page).last()).toContainText("live answer 5");
});
