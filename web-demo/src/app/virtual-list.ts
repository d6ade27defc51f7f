/**
 * A virtualized list over @tanstack/virtual-core: only the items in view (plus a few) are in the
 * DOM, positioned absolutely in a spacer as tall as the whole list; item heights are measured as
 * they render, estimates stand in for the rest.
 *
 * Heights are measured here, not through the virtualizer's measureElement: that path recomputes
 * the offsets of every item after the measured one once per measured item (O(items) each, 300 ms
 * per scroll step at 100,000 entries); measured here, a draw's new items are read in one layout
 * and reported together, and the virtualizer recomputes once.
 */
import { Virtualizer, elementScroll, observeElementOffset, observeElementRect } from "@tanstack/virtual-core";

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
  /** Later size changes of rendered items (images arriving, code highlighted, an output expanded). */
  readonly #resizes: ResizeObserver | null;

  constructor(options: VirtualListOptions) {
    this.#options = options;
    this.#spacer = options.container;
    this.#spacer.style.position = "relative";
    this.virtualizer = new Virtualizer<HTMLElement, HTMLElement>({
      count: 0,
      getScrollElement: () => options.scrollElement,
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
          for (const entry of entries) {
            const element = entry.target as HTMLElement;
            if (!element.isConnected) continue;
            const size = entry.borderBoxSize?.[0]?.blockSize ?? element.getBoundingClientRect().height;
            this.virtualizer.resizeItem(Number(element.dataset.index), Math.round(size));
          }
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

  /** Drops rendered elements (their content changed) and draws again. */
  refresh(): void {
    for (const element of this.#rendered.values()) element.remove();
    this.#rendered.clear();
    this.#draw();
  }

  /** Rebuilds one item if it is rendered. */
  refreshKey(key: string): void {
    const element = this.#rendered.get(key);
    if (!element) return;
    element.remove();
    this.#rendered.delete(key);
    this.#draw();
  }

  scrollToIndex(index: number, align: "start" | "center" | "end" | "auto" = "auto"): void {
    this.virtualizer.scrollToIndex(index, { align });
  }

  renderedElement(key: string): HTMLElement | undefined {
    return this.#rendered.get(key);
  }

  destroy(): void {
    this.#cleanup();
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
    this.#spacer.style.height = `${v.getTotalSize()}px`;
    const items = v.getVirtualItems();
    const keep = new Set<string>();
    const added: HTMLElement[] = [];
    for (const item of items) {
      const key = String(item.key);
      keep.add(key);
      let element = this.#rendered.get(key);
      if (!element) {
        element = this.#options.render(item.index) ?? document.createElement("div");
        element.dataset.index = String(item.index);
        element.style.position = "absolute";
        element.style.top = "0";
        element.style.left = "0";
        element.style.right = "0";
        this.#spacer.append(element);
        this.#rendered.set(key, element);
        added.push(element);
      } else if (element.dataset.index !== String(item.index)) {
        element.dataset.index = String(item.index);
      }
      element.style.transform = `translateY(${item.start}px)`;
    }
    // The DOM in list order: reading order for assistive technology and for tests.
    let previous: Element | null = null;
    for (const item of items) {
      const element = this.#rendered.get(String(item.key))!;
      if (element.previousElementSibling !== previous) (previous ? previous.after(element) : this.#spacer.prepend(element));
      previous = element;
    }
    for (const [key, element] of this.#rendered) {
      if (!keep.has(key)) {
        this.#resizes?.unobserve(element);
        element.remove();
        this.#rendered.delete(key);
      }
    }
    if (this.#resizes && added.length > 0) {
      // One layout for all new items, then one recompute of the offsets (see the comment on top).
      const sizes = added.map((element) => Math.round(element.getBoundingClientRect().height));
      added.forEach((element, i) => {
        v.resizeItem(Number(element.dataset.index), sizes[i]!);
        this.#resizes!.observe(element);
      });
    }
  }
}
