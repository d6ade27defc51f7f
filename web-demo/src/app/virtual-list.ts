/**
 * A virtualized list: only the items in view (plus a few) are in the DOM, in a spacer as tall as
 * the whole list; item heights are measured as they render, estimates stand in for the rest.
 *
 * Built for a million items: heights are kept in a Fenwick tree, so measuring an item, finding the
 * item at an offset and an item's offset cost O(log items), not a pass over every item (a pass per
 * measured item took 300 ms per scroll step at 100,000 entries). A list taller than MAX_SPACER_PX
 * (Chromium lays out at most about 33.5 million pixels) is scaled: its spacer is MAX_SPACER_PX
 * tall, a jump of the scroll bar moves through the list in proportion, a scroll of less than a
 * screen moves the items by as much (reading stays 1:1), and once scrolling rests the scroll bar is
 * moved back in proportion to where the reader is (the items stay where they are on screen). The
 * items sit in a window positioned where the view is, each placed in it by a small offset.
 *
 * Heights are measured by a ResizeObserver, after the browser's own layout of the frame, so a
 * draw never forces a layout. An item that grows or shrinks above the view's top keeps what is in
 * view where it is; a view at the list's end stays at its end. Work per task is bounded: a draw builds new items (markdown, highlighting)
 * until RENDER_BUDGET_MS have passed, the items in view before those in the overscan; the rest
 * stand as empty placeholders of their estimated height and are built in the next task.
 *
 * Out of the document the scroller has no size: the list builds nothing until it is in it. `reset`
 * works out where a new list starts before building anything, so the items built first are the
 * ones the first frame shows, and what that draw leaves to build waits for that frame.
 */

type Align = "start" | "center" | "end" | "auto";

/** Time a draw may spend building new items before it leaves the rest to the next task. */
export const RENDER_BUDGET_MS = 12;

/** The tallest spacer the list makes: beyond, the scroll space is scaled (see above). */
const MAX_SPACER_PX = 8_000_000;
/** Scrolling that has rested this long has its scroll bar put back in proportion. */
const SCROLL_REST_MS = 150;

export interface VirtualListOptions {
  scrollElement: HTMLElement;
  /** The element holding the items (inside scrollElement). */
  container: HTMLElement;
  estimateSize: (index: number) => number;
  /** The item's element; null draws an empty placeholder. */
  render: (index: number) => HTMLElement | null;
  /** A stable key per index (an entry id): rendered elements are reused by key. */
  key: (index: number) => string;
  /** Where the item with this key is after setCount (-1: gone): its measured height is kept. Without it, setCount forgets heights. */
  indexOfKey?: (key: string) => number;
  overscan?: number;
  /** Fixed-height rows skip measuring. */
  fixedSize?: boolean;
  onScroll?: () => void;
}

/** Item heights and their prefix sums, in a Fenwick tree. */
class Heights {
  readonly count: number;
  readonly #size: Float64Array;
  readonly #tree: Float64Array;
  readonly #top: number;
  total = 0;

  constructor(count: number, sizeOf: (index: number) => number) {
    this.count = count;
    this.#size = new Float64Array(count);
    this.#tree = new Float64Array(count + 1);
    for (let i = 0; i < count; i++) {
      const size = sizeOf(i);
      this.#size[i] = size;
      this.total += size;
      this.#tree[i + 1] = this.#tree[i + 1]! + size;
      const parent = i + 1 + ((i + 1) & -(i + 1));
      if (parent <= count) this.#tree[parent] = this.#tree[parent]! + this.#tree[i + 1]!;
    }
    this.#top = count === 0 ? 0 : 2 ** Math.floor(Math.log2(count));
  }

  size(i: number): number {
    return this.#size[i]!;
  }

  set(i: number, size: number): void {
    const delta = size - this.#size[i]!;
    if (delta === 0) return;
    this.#size[i] = size;
    this.total += delta;
    for (let k = i + 1; k <= this.count; k += k & -k) this.#tree[k] = this.#tree[k]! + delta;
  }

  /** The top of item `i`: the heights of the items before it. */
  start(i: number): number {
    let sum = 0;
    for (let k = i; k > 0; k -= k & -k) sum += this.#tree[k]!;
    return sum;
  }

  /** The item at `offset` (the first at or below 0, the last at or past the end). */
  indexAt(offset: number): number {
    let index = 0;
    let rest = offset;
    for (let step = this.#top; step > 0; step >>= 1) {
      const next = index + step;
      if (next <= this.count && this.#tree[next]! <= rest) {
        index = next;
        rest -= this.#tree[next]!;
      }
    }
    return Math.min(index, this.count - 1);
  }
}

export class VirtualList {
  readonly #options: VirtualListOptions;
  readonly #scroller: HTMLElement;
  readonly #spacer: HTMLElement;
  /** Holds the items, positioned where the view is (see the comment on top). */
  readonly #window: HTMLElement;
  #heights = new Heights(0, () => 0);
  /** Measured heights by key, kept across setCount (with indexOfKey). */
  #measured = new Map<string, number>();
  /** Where the view's top is in the list (negative while content above the list shows). */
  #offset = 0;
  /** The scroller's scrollTop at the last scroll event seen, and one this list set itself. */
  #scrollTop = 0;
  #expectedScrollTop: number | null = null;
  #viewport = 0;
  /** The list's offset in the scroller (content above it) and a bar stuck over the view's top. */
  #margin = 0;
  #stuck = 0;
  #spacerHeight = -1;
  #rendered = new Map<string, HTMLElement>();
  #scheduled = false;
  /** Placeholders standing for items not built yet (by key). */
  #placeholders = new Set<string>();
  /** Cancels the draw scheduled to build the placeholders' items. */
  #continuation: (() => void) | null = null;
  /** A reset's draw: what it leaves to build follows the frame that shows what it built. */
  #firstScreen = false;
  /** Working out where a reset list starts: nothing is drawn. */
  #positioning = false;
  #rest: ReturnType<typeof setTimeout> | null = null;
  /** In the ResizeObserver's callback (and the microtasks it queues). */
  #inObserver = false;
  /** Later size changes of rendered items (images arriving, code highlighted, an output expanded). */
  readonly #resizes: ResizeObserver | null;
  readonly #viewportSize: ResizeObserver;
  readonly #onScrollEvent = () => this.#onScroll();

  constructor(options: VirtualListOptions) {
    this.#options = options;
    this.#scroller = options.scrollElement;
    this.#spacer = options.container;
    this.#spacer.style.position = "relative";
    this.#window = document.createElement("div");
    this.#window.style.cssText = "position: absolute; top: 0; left: 0; right: 0";
    this.#spacer.replaceChildren(this.#window);
    this.#resizes = options.fixedSize
      ? null
      : new ResizeObserver((entries) => {
          // The draw these sizes cause builds nothing new: an element observed during the observer's
          // delivery is reported only in the next frame, with a "ResizeObserver loop" error event.
          this.#inObserver = true;
          // A view at the list's end stays there (a conversation read from its newest message).
          const atEnd = this.count > 0 && this.distanceFromEnd() < 1 && this.#offset > 0;
          for (const entry of entries) {
            const element = entry.target as HTMLElement;
            if (!element.isConnected) continue;
            const size = entry.borderBoxSize?.[0]?.blockSize ?? element.getBoundingClientRect().height;
            this.#resize(Number(element.dataset.index), Math.round(size));
          }
          if (atEnd) this.#moveTo(this.#maxOffset());
          this.#draw();
          // After the draw (a microtask queued before this one would see the flag).
          queueMicrotask(() => (this.#inObserver = false));
        });
    this.#viewportSize = new ResizeObserver(() => {
      // Its first report (on observing) usually changes nothing: a draw then would build, in the
      // frame a reset wants painted, what the reset left for after it.
      const viewport = this.#scroller.clientHeight;
      if (viewport === this.#viewport) return;
      this.#viewport = viewport;
      this.#schedule();
    });
    this.#viewportSize.observe(this.#scroller);
    this.#viewport = this.#scroller.clientHeight;
    this.#scrollTop = this.#scroller.scrollTop;
    this.#scroller.addEventListener("scroll", this.#onScrollEvent, { passive: true });
  }

  get count(): number {
    return this.#heights.count;
  }

  setCount(count: number): void {
    const { estimateSize, indexOfKey } = this.#options;
    this.#heights = new Heights(count, estimateSize);
    if (indexOfKey) {
      const kept = new Map<string, number>();
      for (const [key, size] of this.#measured) {
        const index = indexOfKey(key);
        if (index < 0 || index >= count) continue;
        this.#heights.set(index, size);
        kept.set(key, size);
      }
      this.#measured = kept;
    } else this.#measured.clear();
    this.#offset = Math.min(this.#offset, this.#maxOffset());
    this.#draw();
  }

  /**
   * Lists `count` items anew, scrolled to where `start` says (called once the count is set; it may
   * set the scroll margin) before anything is built: the items built are those there.
   */
  reset(count: number, start: () => { index: number; align: Align }): void {
    this.#continuation?.();
    this.#continuation = null;
    for (const element of this.#rendered.values()) {
      this.#resizes?.unobserve(element);
      element.remove();
    }
    this.#rendered.clear();
    this.#placeholders.clear();
    this.#positioning = true;
    try {
      this.setCount(count);
      const { index, align } = start();
      // The size the scroller has now, not the one last observed (it may just have entered the document).
      if (this.#scroller.isConnected) this.#viewport = this.#scroller.clientHeight;
      this.scrollToIndex(index, align);
    } finally {
      this.#positioning = false;
    }
    this.#firstScreen = true;
    try {
      this.#draw();
    } finally {
      this.#firstScreen = false;
    }
  }

  /** Every height estimated again (the rows' height changed). */
  remeasure(): void {
    this.#measured.clear();
    this.setCount(this.count);
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
    if (margin === this.#margin && stuck === this.#stuck) return;
    this.#margin = margin;
    this.#stuck = stuck;
    if (this.#scale() === 1) this.#offset = this.#scrollTop - margin;
    this.#draw();
  }

  scrollToIndex(index: number, align: Align = "auto"): void {
    if (index < 0 || index >= this.count) return;
    const heights = this.#heights;
    const start = heights.start(index);
    const size = heights.size(index);
    const view = this.#viewport;
    let target: number;
    if (align === "start") target = start - this.#stuck;
    else if (align === "end") target = start + size - view;
    else if (align === "center") target = start + size / 2 - (view + this.#stuck) / 2;
    else if (start - this.#stuck < this.#offset) target = start - this.#stuck;
    else if (start + size > this.#offset + view) target = start + size - view;
    else return;
    this.#sizeSpacer();
    this.#offset = Math.max(-this.#margin, Math.min(target, this.#maxOffset()));
    this.#setScrollTop(this.#scrollTopFor(this.#offset));
    // Not scaled, the list is where the scroller went (it may have stopped short of the target).
    if (this.#scale() === 1) this.#offset = this.#scrollTop - this.#margin;
    this.#draw();
  }

  renderedElement(key: string): HTMLElement | undefined {
    return this.#placeholders.has(key) ? undefined : this.#rendered.get(key);
  }

  /** The item at `y` pixels below the view's top, or -1 when that is above the list or the list is empty. */
  indexAtViewY(y: number): number {
    const offset = this.#offset + y;
    return offset < 0 || this.count === 0 ? -1 : this.#heights.indexAt(offset);
  }

  /** Pixels of the list below the view. */
  distanceFromEnd(): number {
    return this.#heights.total - this.#viewport - this.#offset;
  }

  /** The scroller's scrollTop (content above the list scrolls as it is: 0 to its margin). */
  get scrollTop(): number {
    return this.#scrollTop;
  }

  destroy(): void {
    this.#scroller.removeEventListener("scroll", this.#onScrollEvent);
    this.#continuation?.();
    if (this.#rest !== null) clearTimeout(this.#rest);
    this.#resizes?.disconnect();
    this.#viewportSize.disconnect();
    this.#spacer.replaceChildren();
    this.#rendered.clear();
  }

  // --- scroll space ------------------------------------------------------------------------

  #maxOffset(): number {
    return Math.max(0, this.#heights.total - this.#viewport);
  }

  #spacerSize(): number {
    return Math.min(this.#heights.total, MAX_SPACER_PX);
  }

  /** List pixels per scroll pixel below the list's top: 1 unless the list is taller than MAX_SPACER_PX. */
  #scale(): number {
    const spacer = this.#spacerSize();
    const view = this.#viewport;
    return spacer >= this.#heights.total || spacer <= view ? 1 : (this.#heights.total - view) / (spacer - view);
  }

  /** The list offset a scrollTop stands for, in proportion. */
  #offsetFor(scrollTop: number): number {
    const below = scrollTop - this.#margin;
    return below <= 0 ? below : Math.min(below * this.#scale(), this.#maxOffset());
  }

  #scrollTopFor(offset: number): number {
    return offset <= 0 ? offset + this.#margin : this.#margin + offset / this.#scale();
  }

  #setScrollTop(scrollTop: number): void {
    this.#scroller.scrollTop = scrollTop;
    // What the scroller made of it (clamped, rounded): the scroll event it sends is this list's own.
    this.#scrollTop = this.#scroller.scrollTop;
    this.#expectedScrollTop = this.#scrollTop;
  }

  #onScroll(): void {
    const scrollTop = this.#scroller.scrollTop;
    if (this.#expectedScrollTop !== null && Math.abs(scrollTop - this.#expectedScrollTop) < 1) {
      this.#expectedScrollTop = null;
      this.#scrollTop = scrollTop;
      return;
    }
    this.#expectedScrollTop = null;
    const delta = scrollTop - this.#scrollTop;
    this.#scrollTop = scrollTop;
    const scale = this.#scale();
    const atEnd = scrollTop >= this.#margin + this.#spacerSize() - this.#viewport - 1;
    if (scale === 1 || scrollTop <= this.#margin) this.#offset = scrollTop - this.#margin;
    else if (atEnd) this.#offset = this.#maxOffset();
    // Less than a screen (a wheel, a key): the items move as far as the scroll did; a jump: in proportion.
    else if (Math.abs(delta) <= this.#viewport) this.#offset = Math.max(0, Math.min(this.#offset + delta, this.#maxOffset()));
    else this.#offset = this.#offsetFor(scrollTop);
    if (scale !== 1) this.#restLater();
    this.#schedule();
    this.#options.onScroll?.();
  }

  /** Once scrolling rests, the scroll bar in proportion to where the reader is (a scaled list only). */
  #restLater(): void {
    if (this.#rest !== null) clearTimeout(this.#rest);
    this.#rest = setTimeout(() => {
      this.#rest = null;
      const wanted = this.#scrollTopFor(this.#offset);
      if (Math.abs(wanted - this.#scrollTop) < 1) return;
      this.#setScrollTop(wanted);
      this.#draw();
    }, SCROLL_REST_MS);
  }

  /** An item's measured height; what is in view stays where it is when an item above the view's top changed. */
  #resize(index: number, size: number): void {
    if (!(index >= 0 && index < this.count)) return;
    const before = this.#heights.size(index);
    if (before === size) return;
    const key = this.#options.key(index);
    this.#measured.set(key, size);
    const above = this.#heights.start(index) < this.#offset;
    this.#heights.set(index, size);
    if (!above) return;
    this.#moveTo(this.#offset + size - before);
  }

  /** The view to list offset `offset`, the scroller with it when the list is not scaled. */
  #moveTo(offset: number): void {
    this.#offset = offset;
    if (this.#scale() !== 1) return;
    this.#sizeSpacer();
    this.#setScrollTop(offset + this.#margin);
  }

  // --- drawing -----------------------------------------------------------------------------

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    queueMicrotask(() => {
      this.#scheduled = false;
      this.#draw();
    });
  }

  #sizeSpacer(): void {
    const spacerHeight = this.#spacerSize();
    if (spacerHeight === this.#spacerHeight) return;
    this.#spacerHeight = spacerHeight;
    this.#spacer.style.height = `${spacerHeight}px`;
  }

  #draw(): void {
    const heights = this.#heights;
    this.#sizeSpacer();
    if (this.#positioning || !this.#scroller.isConnected) return;
    if (heights.count === 0) {
      for (const element of this.#rendered.values()) element.remove();
      this.#rendered.clear();
      this.#placeholders.clear();
      return;
    }
    const overscan = this.#options.overscan ?? 4;
    const top = Math.max(0, this.#offset);
    const inView = { first: heights.indexAt(top), last: heights.indexAt(Math.max(top, this.#offset + this.#viewport - 1)) };
    const range = { first: Math.max(0, inView.first - overscan), last: Math.min(heights.count - 1, inView.last + overscan) };
    const keys: string[] = [];
    for (let index = range.first; index <= range.last; index++) keys.push(this.#options.key(index));
    const keep = new Set(keys);
    for (const [key, element] of this.#rendered) {
      if (!keep.has(key)) {
        this.#resizes?.unobserve(element);
        element.remove();
        this.#rendered.delete(key);
        this.#placeholders.delete(key);
      }
    }
    // The items in view first, then the overscan; at least one per draw, so drawing always progresses.
    const order: number[] = [];
    for (let index = inView.first; index <= inView.last; index++) order.push(index);
    for (let index = range.first; index <= range.last; index++) if (index < inView.first || index > inView.last) order.push(index);
    const deadline = performance.now() + RENDER_BUDGET_MS;
    let built = 0;
    for (const index of order) {
      const key = keys[index - range.first]!;
      const existing = this.#rendered.get(key);
      if (existing && !this.#placeholders.has(key)) continue;
      if (this.#inObserver || (built > 0 && performance.now() >= deadline)) {
        if (!existing) this.#place(key, index, this.#placeholder(heights.size(index)), true);
        continue;
      }
      existing?.remove();
      this.#place(key, index, this.#options.render(index) ?? document.createElement("div"), false);
      built++;
    }
    // The window sits where the view is (scaled) or at the top (not scaled); items at small offsets in it.
    const below = this.#scrollTop - this.#margin;
    const windowTop = this.#scale() === 1 ? 0 : Math.max(0, Math.floor(below));
    this.#window.style.top = `${windowTop}px`;
    const shift = below - this.#offset - windowTop;
    let start = heights.start(range.first);
    let previous: Element | null = null;
    for (let index = range.first; index <= range.last; index++) {
      const element = this.#rendered.get(keys[index - range.first]!)!;
      if (element.dataset.index !== String(index)) element.dataset.index = String(index);
      element.style.transform = `translateY(${start + shift}px)`;
      start += heights.size(index);
      // The DOM in list order: reading order for assistive technology and for tests.
      if (element.previousElementSibling !== previous) (previous ? previous.after(element) : this.#window.prepend(element));
      previous = element;
    }
    if (this.#placeholders.size > 0 && this.#continuation === null) {
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

  #place(key: string, index: number, element: HTMLElement, placeholder: boolean): void {
    element.dataset.index = String(index);
    element.style.position = "absolute";
    element.style.top = "0";
    element.style.left = "0";
    element.style.right = "0";
    this.#window.append(element);
    this.#rendered.set(key, element);
    if (placeholder) this.#placeholders.add(key);
    else {
      this.#placeholders.delete(key);
      // Measured after the frame's layout (see the comment on top).
      this.#resizes?.observe(element);
    }
  }
}
