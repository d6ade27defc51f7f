/**
 * The viewer's VirtualList in Chromium: work per task is bounded (items in view are built first,
 * the rest stand as placeholders until the next task) and items are measured by the browser's own
 * layout (a ResizeObserver), not by a forced layout after building them; a list made out of the
 * document builds nothing until it is in it, and `reset` builds the items where it starts first;
 * a million items taller than Chromium can lay out are scaled into its scroll space, reading stays
 * 1:1, and a view at the end or below a growing item stays where it is.
 */
import { afterEach, describe, expect, test } from "vitest";
import { RENDER_BUDGET_MS, VirtualList } from "../../web-demo/src/app/virtual-list.js";

const COUNT = 10_000;
/** Each item costs this much to build (markdown and highlighting stand-in). */
const BUILD_MS = 4;
const ESTIMATE = 50;

let cleanup: (() => void) | null = null;
afterEach(() => {
  cleanup?.();
  cleanup = null;
});

function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

function makeList(height: (i: number) => number, build = BUILD_MS, inDocument = true) {
  const scroll = document.createElement("div");
  scroll.style.cssText = "height: 400px; overflow: auto; position: relative";
  const spacer = document.createElement("div");
  scroll.append(spacer);
  if (inDocument) document.body.append(scroll);
  const built: number[] = [];
  const list = new VirtualList({
    scrollElement: scroll,
    container: spacer,
    estimateSize: () => ESTIMATE,
    key: (i) => `item-${i}`,
    render: (i) => {
      busy(build);
      built.push(i);
      const item = document.createElement("div");
      item.className = "item";
      item.style.height = `${height(i)}px`;
      item.textContent = `item ${i}`;
      return item;
    },
  });
  cleanup = () => {
    list.destroy();
    scroll.remove();
  };
  return { list, scroll, spacer, built };
}

const frame = () => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
const shown = (spacer: HTMLElement) => [...spacer.querySelectorAll<HTMLElement>(".item")].map((e) => Number(e.textContent!.slice(5)));

describe("VirtualList", () => {
  test("a draw builds items for about RENDER_BUDGET_MS, those in view first; the rest follow in later tasks", async () => {
    const { list, spacer, built } = makeList(() => ESTIMATE);
    list.setCount(COUNT);
    // In view: 400 / 50 = 8 items (+ overscan). Each costs BUILD_MS: the first draw stops at the budget.
    const inFirstDraw = built.length;
    expect(inFirstDraw).toBeGreaterThanOrEqual(1);
    expect(inFirstDraw).toBeLessThanOrEqual(Math.ceil(RENDER_BUDGET_MS / BUILD_MS));
    expect(list.complete).toBe(false);
    expect(spacer.querySelectorAll(".virtual-placeholder").length).toBeGreaterThan(0);
    expect(built.every((i) => i < 8)).toBe(true);
    await expect.poll(() => list.complete, { timeout: 10_000 }).toBe(true);
    expect(spacer.querySelectorAll(".virtual-placeholder").length).toBe(0);
    expect(shown(spacer).slice(0, 8)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);

    // A jump to the middle: the same again there, and the items left behind are gone.
    const before = built.length;
    list.scrollToIndex(5000, "start");
    await expect.poll(() => list.complete && shown(spacer).includes(5000), { timeout: 10_000 }).toBe(true);
    expect(built.length - before).toBeGreaterThan(1);
    expect(shown(spacer).every((i) => i >= 4990 && i <= 5020)).toBe(true);
  });

  test("items are placed by their measured heights, without gaps or overlaps, and no ResizeObserver loop error", async () => {
    const errors: string[] = [];
    const onError = (event: ErrorEvent) => errors.push(event.message);
    window.addEventListener("error", onError);
    const height = (i: number) => [30, 60, 90][i % 3]!;
    const { list, scroll, spacer } = makeList(height);
    list.setCount(COUNT);
    await expect.poll(() => list.complete, { timeout: 10_000 }).toBe(true);
    await frame();
    await frame();
    const items = [...spacer.querySelectorAll<HTMLElement>(".item")];
    expect(items.length).toBeGreaterThan(5);
    for (let k = 1; k < items.length; k++) {
      const previous = items[k - 1]!.getBoundingClientRect();
      const current = items[k]!.getBoundingClientRect();
      expect(Math.round(current.top)).toBe(Math.round(previous.bottom));
    }
    // The measured sizes are what the list counts with: item 2 (after 30 + 60 px, not two 50 px estimates) scrolled to the top is at the top.
    list.scrollToIndex(2, "start");
    await frame();
    expect(Math.round(spacer.querySelector(".item[data-index='2']")!.getBoundingClientRect().top)).toBe(Math.round(scroll.getBoundingClientRect().top));
    window.removeEventListener("error", onError);
    expect(errors).toEqual([]);
  });

  test("out of the document a list builds nothing; reset there builds the items at its start first and scrolls to them in the same task", async () => {
    const { list, scroll, spacer, built } = makeList(() => ESTIMATE, BUILD_MS, false);
    list.setCount(COUNT);
    expect(built).toEqual([]);
    document.body.append(scroll);
    list.reset(COUNT, () => ({ index: COUNT - 1, align: "end" }));
    // In view at the end: the last 8 items; nothing from the top was built (and thrown away).
    expect(built.length).toBeGreaterThanOrEqual(1);
    expect(built.every((i) => i >= COUNT - 10)).toBe(true);
    expect(scroll.scrollTop).toBe(scroll.scrollHeight - scroll.clientHeight);
    await expect.poll(() => list.complete, { timeout: 10_000 }).toBe(true);
    expect(shown(spacer)).toContain(COUNT - 1);
    expect(built.every((i) => i >= COUNT - 12)).toBe(true);
  });

  test("what a reset's first draw leaves to build waits for the next frame (which shows what it built), not only for the next task", async () => {
    const { list, spacer, built } = makeList(() => ESTIMATE);
    list.reset(COUNT, () => ({ index: 0, align: "start" }));
    const first = built.length;
    // The budget ran out: placeholders stand for the rest of the view.
    expect(first).toBeLessThan(8);
    const builtByNextTask = await new Promise<number>((resolve) => setTimeout(() => resolve(built.length), 0));
    expect(builtByNextTask).toBe(first);
    await expect.poll(() => list.complete, { timeout: 10_000 }).toBe(true);
    expect(shown(spacer).slice(0, 8)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  test("a million items taller than Chromium lays out: the scroll bar spans them all, a jump lands in proportion, reading moves 1:1", async () => {
    const { list, scroll, spacer } = makeList(() => ESTIMATE, 0);
    list.setCount(1_000_000);
    await expect.poll(() => list.complete).toBe(true);
    // 50 million pixels of items in a spacer Chromium can lay out.
    expect(scroll.scrollHeight).toBeLessThan(10_000_000);
    const top = (i: number) => spacer.querySelector(`[data-index="${i}"]`)?.getBoundingClientRect().top;
    const view = scroll.getBoundingClientRect().top;

    list.scrollToIndex(999_999, "end");
    await expect.poll(() => shown(spacer).includes(999_999)).toBe(true);
    expect(Math.round(top(999_999)! - view)).toBe(400 - ESTIMATE);
    expect(list.distanceFromEnd()).toBe(0);

    // The scroll bar dragged to its middle: the middle of the list.
    scroll.scrollTop = (scroll.scrollHeight - 400) / 2;
    await expect.poll(() => shown(spacer).some((i) => Math.abs(i - 500_000) < 100)).toBe(true);
    // A wheel's worth up: the items move as far as the scroll did, not 6 times as far.
    const item = shown(spacer)[3]!;
    const before = top(item)!;
    scroll.scrollTop -= 120;
    await frame();
    expect(Math.round(top(item)! - before)).toBe(120);
    // Once scrolling rests, the scroll bar is moved back in proportion; what is on screen stays.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await frame();
    expect(Math.round(top(item)! - before)).toBe(120);
    expect(shown(spacer)).toContain(item);

    scroll.scrollTop = 0;
    await expect.poll(() => shown(spacer)[0]).toBe(0);
    expect(Math.round(top(0)! - view)).toBe(0);
  });

  test("an item growing above the view keeps what is in view in place; a view at the end stays at the end", async () => {
    const heights = new Map<number, number>();
    const { list, scroll, spacer } = makeList((i) => heights.get(i) ?? ESTIMATE, 0);
    list.setCount(COUNT);
    list.scrollToIndex(100, "start");
    await expect.poll(() => list.complete && shown(spacer).includes(100)).toBe(true);
    await frame();
    const element = (i: number) => spacer.querySelector<HTMLElement>(`.item[data-index="${i}"]`)!;
    const at = element(100).getBoundingClientRect().top;
    // Item 97 (in the overscan, above the view) grows by 200 px.
    element(97).style.height = "250px";
    await frame();
    await frame();
    expect(Math.round(element(100).getBoundingClientRect().top)).toBe(Math.round(at));

    list.scrollToIndex(COUNT - 1, "end");
    await expect.poll(() => list.complete && shown(spacer).includes(COUNT - 1)).toBe(true);
    element(COUNT - 1).style.height = "300px";
    await frame();
    await frame();
    expect(Math.round(element(COUNT - 1).getBoundingClientRect().bottom)).toBe(Math.round(scroll.getBoundingClientRect().bottom));
  });
});
