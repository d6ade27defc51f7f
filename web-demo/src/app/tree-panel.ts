/**
 * The session view's tree sidebar: search in the session, the filters, the tree of every entry
 * (virtualized, fixed-height rows, folding, keyboard) and "N / M entries". It owns the filter and
 * the search; the session view tells it which path is viewed (shaded, its leaf marked) and which
 * entry is being read (marked, and scrolled to as the messages scroll), and hears which entry
 * was chosen. It is laid out by `start()` (the session view calls it after the messages' first
 * frame), or sooner when the reader uses it. Rows are compact (13 px, as in pi's export: 55 and
 * more in a 900 px window) where there is a mouse and room, taller on a narrow screen for fingers.
 */
import { ENTRY_FILTERS, FILTER_LABELS, searchEntries, type EntryFilter } from "../model/filters.js";
import type { SessionModel } from "../model/session-model.js";
import { layoutTree, type EntrySet, type TreeLayout } from "../model/tree-layout.js";
import { el, formatCount } from "../render/dom.js";
import { renderTreeRow } from "../render/tree-row.js";
import { VirtualList } from "./virtual-list.js";

/** Where the session view is: the tree marks the path and the target, and centres on the target (else the leaf). */
export interface TreePosition {
  /** Entries on the root → leaf path, by number. */
  activePath: EntrySet;
  leafId: string | null;
  targetId: string | null;
}

export interface TreePanelOptions {
  model: SessionModel;
  filter: EntryFilter;
  query: string;
  position: TreePosition;
  /** A row was chosen (click, Enter, Space). */
  onOpenEntry: (entryId: string) => void;
  /** The filter or the search changed (a link carries both). */
  onFilterOrSearch: () => void;
  /** The sidebar is done with (✕, or a row clicked): on a narrow screen it lies over the messages. */
  onClose: () => void;
}

/** Row heights: compact beside the messages, taller where the tree is an overlay on a narrow (touch) screen. */
const ROW_HEIGHT = { compact: 13, touch: 24 } as const;
const NARROW = "(max-width: 900px)";

export class TreePanel {
  readonly element: HTMLElement;
  readonly #options: TreePanelOptions;
  readonly #model: SessionModel;
  readonly #search: HTMLInputElement;
  readonly #filters: HTMLElement;
  readonly #status: HTMLElement;
  readonly #scroll: HTMLElement;
  readonly #list: VirtualList;
  #filter: EntryFilter;
  /** The search as last applied (the input runs ahead of it while typing). */
  #query: string;
  #position: TreePosition;
  /** Null until laid out (`start`). */
  #layout: TreeLayout | null = null;
  #matches: Set<number> | null = null;
  #searchSeq = 0;
  #folded = new Set<string>();
  #cursorId: string | null = null;
  /** The entry being read in the messages. */
  #readingId: string | null = null;
  /** The rows marked for the viewed leaf and for the entry being read: theirs, or their nearest listed ancestor's. */
  #leafRow: string | null = null;
  #readingRow: string | null = null;
  #rowHeight: number;
  readonly #narrow = window.matchMedia(NARROW);
  readonly #onNarrowChange = () => this.#setRowHeight();

  constructor(options: TreePanelOptions) {
    this.#options = options;
    this.#model = options.model;
    this.#filter = options.filter;
    this.#query = options.query;
    this.#position = options.position;

    this.#search = el("input", { type: "search", id: "tree-search", class: "sidebar-search", placeholder: "Search this session…", "aria-label": "Search this session", autocomplete: "off" });
    this.#search.value = this.#query;
    this.#filters = el("div", { class: "sidebar-filters", role: "group", "aria-label": "Filter" });
    for (const filter of ENTRY_FILTERS) {
      this.#filters.append(el("button", { type: "button", class: "filter-btn", "data-filter": filter, title: FILTER_LABELS[filter].title, "aria-pressed": "false" }, FILTER_LABELS[filter].label));
    }
    const spacer = el("div", { class: "tree-spacer" });
    this.#scroll = el("div", { id: "tree", class: "tree-container", role: "tree", tabindex: "0", "aria-label": "Session tree" }, spacer);
    this.#rowHeight = this.#narrow.matches ? ROW_HEIGHT.touch : ROW_HEIGHT.compact;
    this.#scroll.style.setProperty("--tree-row", `${this.#rowHeight}px`);
    this.#status = el("div", { id: "tree-status", class: "tree-status", "aria-live": "polite" });
    const close = el("button", { type: "button", class: "sidebar-close", "data-action": "close-sidebar", title: "Close", "aria-label": "Close the tree" }, "✕");
    this.element = el("aside", { id: "sidebar", class: "sidebar" }, el("div", { class: "sidebar-header" }, el("div", { class: "sidebar-controls" }, this.#search, close), this.#filters), this.#scroll, this.#status);
    close.addEventListener("click", () => options.onClose());

    this.#list = new VirtualList({
      scrollElement: this.#scroll,
      container: spacer,
      estimateSize: () => this.#rowHeight,
      fixedSize: true,
      overscan: 6,
      // Rows exist only once laid out.
      key: (r) => this.#model.id(this.#layout!.entryIndex(r)),
      render: (r) =>
        renderTreeRow(this.#layout!.row(r), this.#model, {
          activePath: this.#position.activePath,
          leafId: this.#leafRow,
          targetId: this.#position.targetId,
          cursorId: this.#cursorId,
          readingId: this.#readingRow,
        }),
    });
    this.#narrow.addEventListener("change", this.#onNarrowChange);
    this.#wire();
    this.#syncFilterButtons();
  }

  /** Lays the tree out and draws it (the search first, with one in the address). */
  start(): void {
    if (this.#layout) return;
    if (this.#query) void this.#runSearch();
    else this.#relayout();
  }

  get filter(): EntryFilter {
    return this.#filter;
  }

  get query(): string {
    return this.#query;
  }

  /** Another path or target is viewed: the rows mark it; the layout (and so the scroll) stays. */
  show(position: TreePosition): void {
    this.#position = position;
    this.#markRows();
    this.#list.refresh();
  }

  /** The messages scrolled to `entryId`: its row is marked and brought into view (only when out of it). */
  showReading(entryId: string): void {
    if (entryId === this.#readingId) return;
    const before = this.#readingRow;
    this.#readingId = entryId;
    this.#markRows();
    const after = this.#readingRow;
    if (after === before) return;
    if (before !== null) this.#list.renderedElement(before)?.classList.remove("reading");
    if (after === null) return;
    this.#list.renderedElement(after)?.classList.add("reading");
    // A row is marked only in a layout.
    this.#list.scrollToIndex(this.#layout!.rowOfEntry(this.#model.indexOf(after)!), "auto");
  }

  /** Entries were appended to the session: laid out again, with the viewed path as it is now. */
  entriesAppended(position: TreePosition): void {
    this.#position = position;
    this.#relayout();
  }

  setFilter(filter: EntryFilter): void {
    this.#filter = filter;
    this.#syncFilterButtons();
    this.#relayout();
    this.#options.onFilterOrSearch();
  }

  /** Empties the search box and shows every entry again (Esc; the session view reports the state). */
  clearSearch(): void {
    this.#search.value = "";
    this.#query = "";
    this.#matches = null;
    this.#relayout();
  }

  focus(): void {
    this.#scroll.focus();
  }

  destroy(): void {
    this.#narrow.removeEventListener("change", this.#onNarrowChange);
    this.#list.destroy();
  }

  #markRows(): void {
    this.#leafRow = this.#listedAncestor(this.#position.leafId);
    this.#readingRow = this.#listedAncestor(this.#readingId);
  }

  /** The entry itself when the tree lists it, else its nearest ancestor that it lists. */
  #listedAncestor(id: string | null): string | null {
    const layout = this.#layout;
    if (id === null || layout === null) return null;
    const model = this.#model;
    let i = model.indexOf(id) ?? -1;
    while (i >= 0 && layout.rowOfEntry(i) < 0) i = model.parentIndex(i);
    return i >= 0 ? model.id(i) : null;
  }

  #setRowHeight(): void {
    this.#rowHeight = this.#narrow.matches ? ROW_HEIGHT.touch : ROW_HEIGHT.compact;
    this.#scroll.style.setProperty("--tree-row", `${this.#rowHeight}px`);
    this.#list.remeasure();
    this.#list.refresh();
  }

  #relayout(): void {
    const model = this.#model;
    const { activePath, leafId, targetId } = this.#position;
    const layout = layoutTree(model, { filter: this.#filter, matches: this.#matches, activePath, leafId, folded: this.#folded });
    this.#layout = layout;
    this.#markRows();
    this.#status.textContent = `${formatCount(layout.shown)} / ${formatCount(layout.total)} entries`;
    const focus = targetId ?? leafId;
    const row = focus === null ? -1 : layout.rowOfEntry(model.indexOf(focus) ?? -1);
    if (row >= 0) this.#list.reset(layout.count, () => ({ index: row, align: "center" }));
    else {
      this.#list.setCount(layout.count);
      this.#list.refresh();
    }
  }

  async #runSearch(): Promise<void> {
    const seq = ++this.#searchSeq;
    const query = this.#query.trim();
    if (!query) {
      this.#matches = null;
      this.#relayout();
      return;
    }
    const matches = await searchEntries(this.#model, query, () => seq === this.#searchSeq);
    if (matches === null) return;
    this.#matches = matches;
    this.#relayout();
  }

  #syncFilterButtons(): void {
    for (const button of this.#filters.querySelectorAll<HTMLElement>(".filter-btn")) {
      const active = button.dataset.filter === this.#filter;
      button.classList.toggle("active", active);
      button.setAttribute("aria-pressed", String(active));
    }
  }

  #wire(): void {
    let debounce: ReturnType<typeof setTimeout> | undefined;
    this.#search.addEventListener("input", () => {
      clearTimeout(debounce);
      debounce = setTimeout(() => {
        this.#query = this.#search.value;
        this.#options.onFilterOrSearch();
        void this.#runSearch();
      }, 120);
    });
    this.#filters.addEventListener("click", (event) => {
      const button = (event.target as Element).closest<HTMLElement>(".filter-btn");
      if (button?.dataset.filter) this.setFilter(button.dataset.filter as EntryFilter);
    });
    this.#scroll.addEventListener("click", (event) => {
      const target = event.target as Element;
      const id = target.closest<HTMLElement>(".tree-node")?.dataset.entryId;
      if (!id) return;
      if (target.closest("[data-action='fold']")) {
        this.#toggleFold(id);
        return;
      }
      // Selecting a row's text is not choosing it.
      if (window.getSelection()?.toString()) return;
      this.#cursorId = id;
      this.#options.onClose();
      this.#options.onOpenEntry(id);
    });
    this.#scroll.addEventListener("keydown", (event) => this.#onKey(event));
  }

  #toggleFold(id: string): void {
    if (this.#folded.has(id)) this.#folded.delete(id);
    else this.#folded.add(id);
    this.#cursorId = id;
    this.#relayout();
  }

  #onKey(event: KeyboardEvent): void {
    const layout = this.#layout;
    if (layout === null || layout.count === 0) return;
    const model = this.#model;
    const currentId = this.#cursorId ?? this.#position.targetId ?? this.#position.leafId;
    let row = currentId === null ? 0 : Math.max(0, layout.rowOfEntry(model.indexOf(currentId) ?? -1));
    const moveTo = (r: number) => {
      row = Math.max(0, Math.min(layout.count - 1, r));
      this.#cursorId = model.id(layout.entryIndex(row));
      this.#list.refresh();
      this.#list.scrollToIndex(row, "auto");
    };
    const id = () => model.id(layout.entryIndex(row));
    switch (event.key) {
      case "ArrowDown":
        moveTo(row + 1);
        break;
      case "ArrowUp":
        moveTo(row - 1);
        break;
      case "PageDown":
        moveTo(row + 20);
        break;
      case "PageUp":
        moveTo(row - 20);
        break;
      case "Home":
        moveTo(0);
        break;
      case "End":
        moveTo(layout.count - 1);
        break;
      case "ArrowLeft":
      case "ArrowRight": {
        const r = layout.row(row);
        if (r.foldable && r.folded === (event.key === "ArrowRight")) this.#toggleFold(id());
        break;
      }
      case "Enter":
      case " ":
        this.#options.onOpenEntry(id());
        break;
      default:
        return;
    }
    event.preventDefault();
    event.stopPropagation();
  }
}
