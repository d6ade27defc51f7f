/**
 * Watching a page for what a hostile session must never cause: a dialog, a payload's marker
 * (window.__pwned), a Content Security Policy violation (reported by the page's
 * securitypolicyviolation event), a request leaving the page, a remote or inline element from
 * the session (script, iframe, style, link, svg, form…), a style attribute inside an entry.
 * `exercise` opens every view: each filter, every tree row, every fold and expander, thinking and
 * outputs toggled, images zoomed, the search, the keys, the theme, the narrow layout.
 */
import { expect, type Page } from "@playwright/test";

export interface Watch {
  dialogs: string[];
  requests: string[];
  check(): Promise<void>;
}

/** Starts watching `page` (call before it loads); `allowedOrigin` is where the viewer itself comes from. */
export async function watchPage(page: Page, allowedOrigin: string | null): Promise<Watch> {
  const dialogs: string[] = [];
  const requests: string[] = [];
  page.on("dialog", (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  page.on("request", (request) => {
    const url = request.url();
    const local = url.startsWith("blob:") || url.startsWith("data:") || (allowedOrigin === null ? url.startsWith("file:") : url.startsWith(allowedOrigin));
    if (!local) requests.push(url);
  });
  await page.addInitScript(() => {
    const w = window as unknown as { __violations: string[] };
    w.__violations = [];
    document.addEventListener("securitypolicyviolation", (event) => w.__violations.push(`${event.violatedDirective} ${event.blockedURI} ${event.sample}`));
  });
  return {
    dialogs,
    requests,
    async check() {
      const state = await page.evaluate(() => {
        const w = window as unknown as { __violations: string[]; __pwned?: unknown };
        const body = document.body;
        return {
          pwned: w.__pwned ?? null,
          violations: w.__violations,
          // Inside what the viewer draws (the page's own scripts sit outside it).
          foreign: [...body.querySelectorAll(":is(.app, #image-modal, #keys-dialog) :is(script, iframe, object, embed, style, link, svg, math, form, base, meta, video, audio)")].map((e) => e.outerHTML.slice(0, 80)),
          styled: [...body.querySelectorAll(".entry [style], .tree-node [style]")].map((e) => e.outerHTML.slice(0, 80)),
          classesFromText: [...body.querySelectorAll(".markdown [class]")].map((e) => e.outerHTML.slice(0, 80)).filter((h) => !/^<code class="hljs"/.test(h) && !/^<span class="hljs-/.test(h)),
          bodyDisplay: getComputedStyle(body).display,
        };
      });
      expect(dialogs).toEqual([]);
      expect(requests).toEqual([]);
      expect(state).toEqual({ pwned: null, violations: [], foreign: [], styled: [], classesFromText: [], bodyDisplay: "block" });
    },
  };
}

async function clickAll(page: Page, selector: string): Promise<void> {
  const count = await page.locator(selector).count();
  for (let i = 0; i < count; i++) {
    const target = page.locator(selector).nth(i);
    if (await target.isVisible()) await target.click({ timeout: 5000 }).catch(() => undefined);
  }
}

export async function exercise(page: Page): Promise<void> {
  for (const filter of ["default", "no-tools", "user-only", "labeled-only", "all"]) await page.click(`.filter-btn[data-filter="${filter}"]`);
  const rows = await page.locator("#tree .tree-node").count();
  expect(rows).toBeGreaterThan(20);
  for (let i = 0; i < rows; i++) {
    const row = page.locator("#tree .tree-node").nth(i);
    await row.scrollIntoViewIfNeeded();
    await row.locator(".tree-content").click();
    await clickAll(page, "#messages .expand-hint[aria-expanded='false'], #messages .block-toggle[aria-expanded='false']");
  }
  await page.locator("body").click({ position: { x: 2, y: 2 } });
  await page.keyboard.press("o");
  await page.keyboard.press("t");
  await page.keyboard.press("t");
  await clickAll(page, "#tree .fold");
  await clickAll(page, "#tree .fold");
  const images = page.locator("#messages img");
  for (let i = 0; i < (await images.count()); i++) {
    await images.nth(i).click({ timeout: 5000 }).catch(() => undefined);
    await page.keyboard.press("Escape");
  }
  await clickAll(page, "#messages .branch-link");
  await page.fill("#tree-search", "script alert");
  await page.keyboard.press("Escape");
  await page.keyboard.press("?");
  await page.keyboard.press("Escape");
  await page.click("#theme");
  await page.click("#theme");
  // Scroll both lists end to end: every entry is built once.
  for (const list of ["#messages", "#tree"]) {
    await page.locator(list).evaluate(async (element) => {
      for (let y = 0; y <= element.scrollHeight; y += element.clientHeight / 2) {
        element.scrollTop = y;
        await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 10)));
      }
    });
  }
  await page.setViewportSize({ width: 600, height: 800 });
  await page.click("#menu");
  await page.click(".sidebar-close");
  await page.setViewportSize({ width: 1280, height: 800 });
}
