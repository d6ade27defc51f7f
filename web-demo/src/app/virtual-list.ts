/**
 * A virtualized list over @tanstack/virtual-core: only the items in view (plus a few) are in the
 * DOM, positioned absolutely in a spacer as tall as the whole list; item heights are measured as
 * they render, estimates stand in for the rest.
 *
 * Heights are measured by a ResizeObserver, not through the virtualizer's measureElement: that
 * path recomputes the offsets of every item after the measured one once per measured item
 * (O(items) each, 300 ms per scroll step at 100,000 entries). The observer reports a draw's new
 * items together after the browser's own layout of the frame, so a draw never forces a layout
 * (reading sizes right after building the items did: a third of each scroll step's task).
 *
 * Work per task is bounded: a draw builds new items (markdown, highlighting) until RENDER_BUDGET_MS
 * have passed, the items in view before those in the overscan; the rest stand as empty
 * placeholders of their estimated height and are built in the next task. A jump across a long
 * list is then a few short tasks instead of one long one.
 *
 * The virtualizer takes the scroller up once it is in the document (out of it, it has no size),
 * and `reset` works out where a new list starts before building anything: the items built first
 * are the ones the first frame shows.
 */
import { Virtualizer, elementScroll, observeElementOffset, observeElementRect, type VirtualItem } from "@tanstack/virtual-core";

type Align = "start" | "center" | "end" | "auto";

/** Time a draw may spend building new items before it leaves the rest to the next task. */
export const RENDER_BUDGET_MS = 12;

export interface VirtualListOptions {
  scrollElement: HTMLElement;
  /** The element holding the items (inside scrollElement). */
  container: HTMLElement;
  estimateSize: (index: number) => number;
  /** The item's element; null draws an empty placeholder. */
  render: (index: number) => HTMLElement | null;
  /** A stable key per index (an entry id): rendered elements are reused by key. */
  key: (index: number) => string;
  overscan?: number;
  /** Fixed-height rows skip measuring. */
  fixedSize?: boolean;
  onScroll?: () => void;
}

export class VirtualList {
  readonly virtualizer: Virtualizer<HTMLElement, HTMLElement>;
  readonly #options: VirtualListOptions;
  readonly #spacer: HTMLElement;
  #rendered = new Map<string, HTMLElement>();
  #cleanup: () => void;
  #scheduled = false;
  /** Placeholders standing for items not built yet (by key). */
  #placeholders = new Set<string>();
  /** Cancels the draw scheduled to build the placeholders' items. */
  #continuation: (() => void) | null = null;
  /** A reset's draw: what it leaves to build follows the frame that shows what it built. */
  #firstScreen = false;
  /** In the ResizeObserver's callback (and the microtasks it queues). */
  #inObserver = false;
  /** Working out where a reset list starts: draws only place placeholders. */
  #positioning = false;
  /** Later size changes of rendered items (images arriving, code highlighted, an output expanded). */
  readonly #resizes: ResizeObserver | null;

  constructor(options: VirtualListOptions) {
    this.#options = options;
    this.#spacer = options.container;
    this.#spacer.style.position = "relative";
    this.virtualizer = new Virtualizer<HTMLElement, HTMLElement>({
      count: 0,
      // Out of the document the scroller has no size: taken up once it is in (#draw).
      getScrollElement: () => (options.scrollElement.isConnected ? options.scrollElement : null),
      estimateSize: options.estimateSize,
      getItemKey: options.key,
      overscan: options.overscan ?? 4,
      scrollToFn: elementScroll,
      observeElementRect,
      observeElementOffset,
      onChange: () => this.#schedule(),
    });
    this.#resizes = options.fixedSize
      ? null
      : new ResizeObserver((entries) => {
          // The draw these sizes cause builds nothing new: an element observed during the observer's
          // delivery is reported only in the next frame, with a "ResizeObserver loop" error event.
          this.#inObserver = true;
          for (const entry of entries) {
            const element = entry.target as HTMLElement;
            if (!element.isConnected) continue;
            const size = entry.borderBoxSize?.[0]?.blockSize ?? element.getBoundingClientRect().height;
            this.virtualizer.resizeItem(Number(element.dataset.index), Math.round(size));
          }
          // After the draw the sizes scheduled (a microtask queued before this one).
          queueMicrotask(() => (this.#inObserver = false));
        });
    this.#cleanup = this.virtualizer._didMount();
    this.virtualizer._willUpdate();
    options.scrollElement.addEventListener("scroll", () => options.onScroll?.(), { passive: true });
  }

  setCount(count: number): void {
    this.virtualizer.setOptions({ ...this.virtualizer.options, count });
    this.virtualizer._willUpdate();
    this.#draw();
  }

  /**
   * Lists `count` items anew, scrolled to where `start` says (called once the count is set and
   * the scroller measured; it may set the scroll margin) before anything is built: the items
   * built are those there, and the scroller is scrolled there in the same task. (The virtualizer
   * hears of offsets from scroll events, a frame later: a draw before then built the items at
   * the old offset, to be thrown away.)
   */
  reset(count: number, start: () => { index: number; align: Align }): void {
    this.#continuation?.();
    this.#continuation = null;
    for (const element of this.#rendered.values()) element.remove();
    this.#rendered.clear();
    this.#placeholders.clear();
    this.#positioning = true;
    let target: { index: number; align: Align; offset: number | undefined };
    try {
      this.setCount(count);
      const { index, align } = start();
      const offset = count > 0 && this.virtualizer.scrollElement ? this.virtualizer.getOffsetForIndex(index, align)?.[0] : undefined;
      target = { index, align, offset };
    } finally {
      this.#positioning = false;
    }
    if (target.offset !== undefined) this.virtualizer.scrollOffset = target.offset;
    this.#firstScreen = true;
    try {
      this.#draw();
    } finally {
      this.#firstScreen = false;
    }
    if (target.offset !== undefined) this.virtualizer.scrollToIndex(target.index, { align: target.align });
  }

  /** Drops rendered elements (their content changed) and draws again. */
  refresh(): void {
    for (const element of this.#rendered.values()) element.remove();
    this.#rendered.clear();
    this.#placeholders.clear();
    this.#draw();
  }

  /** Whether every item in the current range is built (no placeholder left). */
  get complete(): boolean {
    return this.#placeholders.size === 0;
  }

  /** Rebuilds one item if it is rendered. */
  refreshKey(key: string): void {
    const element = this.#rendered.get(key);
    if (!element || this.#placeholders.has(key)) return;
    element.remove();
    this.#rendered.delete(key);
    this.#draw();
  }

  /**
   * Content above the list in the same scroller (`margin`: the list's offset in it) and a bar
   * stuck over the top of the view (`stuck`: items scrolled to "start" land below it).
   */
  setScrollMargin(margin: number, stuck: number): void {
    const options = this.virtualizer.options;
    if (options.scrollMargin === margin && options.scrollPaddingStart === stuck) return;
    this.virtualizer.setOptions({ ...options, scrollMargin: margin, scrollPaddingStart: stuck });
    this.virtualizer._willUpdate();
    this.#draw();
  }

  scrollToIndex(index: number, align: Align = "auto"): void {
    this.virtualizer.scrollToIndex(index, { align });
  }

  renderedElement(key: string): HTMLElement | undefined {
    return this.#placeholders.has(key) ? undefined : this.#rendered.get(key);
  }

  destroy(): void {
    this.#cleanup();
    this.#continuation?.();
    this.#resizes?.disconnect();
    this.#spacer.replaceChildren();
    this.#rendered.clear();
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    queueMicrotask(() => {
      this.#scheduled = false;
      this.#draw();
    });
  }

  #draw(): void {
    const v = this.virtualizer;
    if (v.scrollElement === null && this.#options.scrollElement.isConnected) v._willUpdate();
    this.#spacer.style.height = `${v.getTotalSize()}px`;
    const items = v.getVirtualItems();
    const keep = new Set<string>();
    for (const item of items) keep.add(String(item.key));
    for (const [key, element] of this.#rendered) {
      if (!keep.has(key)) {
        this.#resizes?.unobserve(element);
        element.remove();
        this.#rendered.delete(key);
        this.#placeholders.delete(key);
      }
    }
    // The items in view first, then the overscan; at least one per draw, so drawing always progresses.
    const range = v.range;
    const inView = (item: VirtualItem) => range === null || (item.index >= range.startIndex && item.index <= range.endIndex);
    const deadline = performance.now() + RENDER_BUDGET_MS;
    let built = 0;
    for (const item of [...items.filter(inView), ...items.filter((item) => !inView(item))]) {
      const key = String(item.key);
      const existing = this.#rendered.get(key);
      if (existing && !this.#placeholders.has(key)) continue;
      if (this.#inObserver || this.#positioning || (built > 0 && performance.now() >= deadline)) {
        if (!existing) this.#place(key, item, this.#placeholder(item.size), true);
        continue;
      }
      existing?.remove();
      this.#place(key, item, this.#options.render(item.index) ?? document.createElement("div"), false);
      built++;
    }
    for (const item of items) {
      const element = this.#rendered.get(String(item.key))!;
      if (element.dataset.index !== String(item.index)) element.dataset.index = String(item.index);
      element.style.transform = `translateY(${item.start - v.options.scrollMargin}px)`;
    }
    // The DOM in list order: reading order for assistive technology and for tests.
    let previous: Element | null = null;
    for (const item of items) {
      const element = this.#rendered.get(String(item.key))!;
      if (element.previousElementSibling !== previous) (previous ? previous.after(element) : this.#spacer.prepend(element));
      previous = element;
    }
    if (this.#placeholders.size > 0 && this.#continuation === null && !this.#positioning) {
      const next = () => {
        this.#continuation = null;
        this.#draw();
      };
      if (this.#firstScreen) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const frame = requestAnimationFrame(() => (timer = setTimeout(next, 0)));
        this.#continuation = () => {
          cancelAnimationFrame(frame);
          clearTimeout(timer);
        };
      } else {
        const timer = setTimeout(next, 0);
        this.#continuation = () => clearTimeout(timer);
      }
    }
  }

  #placeholder(height: number): HTMLElement {
    const element = document.createElement("div");
    element.className = "virtual-placeholder";
    element.style.height = `${height}px`;
    return element;
  }

  #place(key: string, item: VirtualItem, element: HTMLElement, placeholder: boolean): void {
    element.dataset.index = String(item.index);
    element.style.position = "absolute";
    element.style.top = "0";
    element.style.left = "0";
    element.style.right = "0";
    this.#spacer.append(element);
    this.#rendered.set(key, element);
    if (placeholder) this.#placeholders.add(key);
    else {
      this.#placeholders.delete(key);
      // Measured after the frame's layout (see the comment on top).
      this.#resizes?.observe(element);
    }
  }
}
