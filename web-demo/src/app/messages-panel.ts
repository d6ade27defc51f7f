/**
 * The session view's messages: one scroller holding the session header (its line stays at the
 * top, its details scroll away above the first entry) and the entries of the viewed root → leaf
 * path (virtualized; branch points offer the other branches); what a click in them does (expand,
 * copy a link, zoom an image, open a branch); and the chip under them. While the session is
 * watched, new entries of the viewed path are followed when the view is at the bottom (as a
 * terminal does); scrolled up, the view stays and the chip counts them ("↓ N new" brings the
 * reader back). It reports which entry is being read (the tree follows it).
 */
import type { SessionEntry } from "../../../src/format/types.js";
import { ImageSources } from "../data/images.js";
import type { LoadedSession } from "../data/load-session.js";
import { contentText } from "../model/content-text.js";
import { EntryFlag, type SessionModel } from "../model/session-model.js";
import type { EntrySet } from "../model/tree-layout.js";
import { el, forkIcon, oneLine } from "../render/dom.js";
import { renderEntry, renderEntryFallback, type EntryView } from "../render/entry.js";
import { highlightWithin } from "../render/highlight.js";
import { openImageModal } from "./image-modal.js";
import type { SessionHeader } from "./session-header.js";
import { VirtualList } from "./virtual-list.js";

export interface MessagesPanelOptions {
  session: LoadedSession;
  /** A branch point's branch was chosen. */
  onOpenEntry: (entryId: string) => void;
  /** The address of a link to `entryId` in the current view (for the copy-link buttons). */
  linkToEntry: (entryId: string) => string;
  /** Laid out above the first entry, in the same scroller. */
  header: SessionHeader;
  /** The entry at the top of the reading area changed (the tree marks it and scrolls to it). */
  onReading: (entryId: string) => void;
}

/** How close to the bottom counts as "at the bottom" for following, in pixels. */
const FOLLOW_BOTTOM_SLACK = 48;

export class MessagesPanel {
  /** The scrolling list of messages. */
  readonly element: HTMLElement;
  /** Under the list: "↓ N new" while new entries wait below, or why following stopped. */
  readonly followBar: HTMLElement;
  readonly #options: MessagesPanelOptions;
  readonly #model: SessionModel;
  readonly #images: ImageSources;
  readonly #list: VirtualList;
  /** The viewed path, root → leaf, by entry number, and as a set. */
  #path: readonly number[] = [];
  #onPath: EntrySet = { has: () => false };
  /** The entries of the path the list shows (tool results go with their call), by number; and each entry's row in it (-1: none). */
  #listed = new Int32Array(0);
  #rowOf = new Int32Array(0);
  /** Height guesses of the listed entries, made once per path: the list asks for them on every count change. */
  #estimates = new Float64Array(0);
  #targetId: string | null = null;
  #thinkingVisible = true;
  #outputsExpanded = false;
  #expanded = new Map<string, boolean>();
  #live = false;
  /** The reader scrolled up: new entries wait below instead of moving the view. */
  #followPaused = false;
  #unseen = 0;
  #lastScrollTop = 0;
  #readingId: string | null = null;
  #readingScheduled = false;
  readonly #spacer: HTMLElement;
  readonly #header: SessionHeader;
  /** The header's height above the list, and its line's (stuck over the top of the view). */
  #headerHeight = 0;
  #barHeight = 0;
  readonly #headerSizes: ResizeObserver;

  constructor(options: MessagesPanelOptions) {
    this.#options = options;
    this.#model = options.session.model;
    this.#images = new ImageSources(options.session.storage);
    const spacer = el("div", { class: "messages-spacer" });
    this.#spacer = spacer;
    this.#header = options.header;
    this.element = el("div", { id: "messages", class: "messages", tabindex: "-1" }, options.header.element, spacer);
    this.followBar = el("div", { id: "follow-bar", class: "follow-bar", hidden: "" });
    this.#list = new VirtualList({
      scrollElement: this.element,
      container: spacer,
      estimateSize: (i) => this.#estimates[i] ?? 60,
      // Items are costly (markdown, highlighting): one beyond each edge is enough to scroll into.
      overscan: 1,
      key: (i) => this.#model.id(this.#listed[i]!),
      indexOfKey: (id) => {
        const i = this.#model.indexOf(id);
        return i === undefined ? -1 : (this.#rowOf[i] ?? -1);
      },
      render: (i) => this.#renderListed(i),
      onScroll: () => this.#onScroll(),
    });
    // The list starts below the header: its height is the list's scroll margin, its line's the part of the view it covers.
    this.#headerSizes = new ResizeObserver(() => {
      this.#measureHeader();
      this.#onScroll();
    });
    this.#headerSizes.observe(options.header.bar);
    this.#headerSizes.observe(options.header.details);
    this.element.addEventListener("click", (event) => void this.#onClick(event));
    this.followBar.addEventListener("click", (event) => {
      if ((event.target as Element).closest("[data-action='resume-follow']")) this.resumeFollowing();
    });
  }

  /**
   * Lists `path` (root → leaf, entry numbers; `onPath` holds them) and scrolls to `targetId`'s
   * entry, or to the end without one. The panel is in the document: the entries built first are
   * those in view there.
   */
  show(path: readonly number[], onPath: EntrySet, targetId: string | null): void {
    this.#targetId = targetId;
    const call = this.#callOfResult(targetId);
    // A tool result is shown with its call: a link to it opens that output in full.
    if (call) this.#expanded.set(`${call.id}:out`, true);
    this.#setPath(path, onPath);
    const target = this.#shownTarget();
    const targetIndex = target === null ? undefined : this.#model.indexOf(target);
    const index = targetIndex === undefined ? -1 : this.#rowOf[targetIndex]!;
    const place = () => (index >= 0 ? { index, align: "center" as const } : { index: this.#listed.length - 1, align: "end" as const });
    // Placed by the estimates, below the header as laid out now (its observer reports it a frame later).
    this.#list.reset(this.#listed.length, () => {
      this.#measureHeader();
      return place();
    });
    // Scrolled again once the items there were measured: their ResizeObserver reports after the
    // first frame's layout. Not in that frame's callbacks: the heights are still the estimates
    // reset placed them by, and reading the scroller there laid the new items out a frame early
    // (a second layout before the first entry showed).
    requestAnimationFrame(() =>
      requestAnimationFrame(() => {
        const { index: at, align } = place();
        this.#list.scrollToIndex(at, align);
        this.#readingId = null;
        this.#reportReading();
      }),
    );
  }

  /**
   * Entries were appended to the viewed path (`grownPath`, root → new leaf). At the bottom the
   * view follows them, scrolled up the chip counts them.
   */
  entriesAppended(grownPath: readonly number[], onPath: EntrySet): void {
    const atBottom = !this.#followPaused && this.#isAtBottom();
    const before = this.#listed.length;
    this.#setPath(grownPath, onPath);
    this.#list.setCount(this.#listed.length);
    const grown = this.#listed.length - before;
    if (atBottom) this.#scrollToEnd();
    else this.#unseen += grown;
    this.#updateFollowBar();
  }

  /** The session is watched (new entries may arrive) or not; the session view owns the watch. */
  setLive(on: boolean): void {
    this.#live = on;
    this.#updateFollowBar();
  }

  /** To the end of the path, following again (Follow pressed, or the chip). */
  resumeFollowing(): void {
    this.#followPaused = false;
    this.#unseen = 0;
    this.#scrollToEnd();
    this.#updateFollowBar();
  }

  /** A message in the follow bar (following stopped, the file was replaced). */
  showFollowNotice(message: string): void {
    this.followBar.hidden = false;
    this.followBar.replaceChildren(el("span", { class: "follow-state", role: "status" }, message));
  }

  toggleThinking(): void {
    this.#thinkingVisible = !this.#thinkingVisible;
    this.#list.refresh();
  }

  toggleOutputs(): void {
    this.#outputsExpanded = !this.#outputsExpanded;
    this.#expanded.clear();
    this.#list.refresh();
  }

  /** The entry being read, unless the view is at the end of the list. */
  readingAwayFromEnd(): string | null {
    return this.#isAtBottom() ? null : this.#readingId;
  }

  /** Puts the entry (when listed) at the top of the view, under the header's line. */
  scrollToEntry(entryId: string): void {
    const i = this.#model.indexOf(entryId);
    const index = i === undefined ? -1 : this.#rowOf[i]!;
    if (index < 0) return;
    // Twice: once to the estimate, once more after the items there were measured.
    this.#list.scrollToIndex(index, "start");
    requestAnimationFrame(() => requestAnimationFrame(() => this.#list.scrollToIndex(index, "start")));
  }

  /** Scrolls by one message (j/k) or one user turn ([ and ]). */
  step(direction: 1 | -1, turns: boolean): void {
    const current = Math.max(0, this.#list.indexAtViewY(this.#barHeight + 4));
    let i = current + direction;
    if (turns) while (i >= 0 && i < this.#listed.length && (this.#model.flags(this.#listed[i]!) & EntryFlag.User) === 0) i += direction;
    i = Math.max(0, Math.min(this.#listed.length - 1, i));
    this.#list.scrollToIndex(i, "start");
  }

  destroy(): void {
    this.#headerSizes.disconnect();
    this.#list.destroy();
    this.#images.dispose();
  }

  /** The header's height above the list (the list's scroll margin) and its line's (the part of the view it covers). */
  #measureHeader(): void {
    this.#headerHeight = this.#spacer.offsetTop;
    this.#barHeight = this.#header.bar.offsetHeight;
    this.element.style.setProperty("--header-bar-height", `${this.#barHeight}px`);
    this.#list.setScrollMargin(this.#headerHeight, this.#barHeight);
  }

  #setPath(path: readonly number[], onPath: EntrySet): void {
    const model = this.#model;
    this.#path = path;
    this.#onPath = onPath;
    const listed = new Int32Array(path.length);
    let count = 0;
    for (const i of path) if (model.listed(i)) listed[count++] = i;
    this.#listed = listed.subarray(0, count);
    this.#rowOf = new Int32Array(model.size).fill(-1);
    for (let k = 0; k < count; k++) this.#rowOf[listed[k]!] = k;
    this.#estimates = new Float64Array(count);
    for (let k = 0; k < count; k++) this.#estimates[k] = estimateEntryHeight(model.flags(listed[k]!));
  }

  // --- rendering ---------------------------------------------------------------------------

  #entryView(): EntryView {
    return {
      model: this.#model,
      thinkingVisible: this.#thinkingVisible,
      outputsExpanded: this.#outputsExpanded,
      expanded: this.#expanded,
      imageSource: (block) => this.#images.source(block),
      targetId: this.#shownTarget(),
    };
  }

  /** The tool call a tool result entry answers, when the session has it (the result is then shown with the call). */
  #callOfResult(entryId: string | null): { id: string; entryId: string } | undefined {
    const entry = entryId === null ? undefined : this.#model.getEntry(entryId);
    if (entry?.type !== "message" || typeof entry.message !== "object" || entry.message === null || entry.message.role !== "toolResult") return undefined;
    return this.#model.toolCall(String(entry.message.toolCallId));
  }

  /** The listed entry showing the target: its own, or for a tool result its call's. */
  #shownTarget(): string | null {
    return this.#callOfResult(this.#targetId)?.entryId ?? this.#targetId;
  }

  #renderListed(i: number): HTMLElement | null {
    const index = this.#listed[i]!;
    const entry = this.#model.entry(index);
    const view = this.#entryView();
    let item: HTMLElement | null;
    try {
      item = renderEntry(entry, view);
    } catch (error) {
      // One entry's text must not take the list down with it: its raw text instead, the rest as usual.
      item = renderEntryFallback(entry, error, view);
    }
    if (!item) return null;
    if (this.#model.childCount(index) > 1) item.append(this.#branchPoint(index));
    highlightWithin(item);
    return el("div", { class: "entry-slot" }, item);
  }

  /** Where branches split: each branch, to open it. */
  #branchPoint(index: number): HTMLElement {
    const model = this.#model;
    const branches = model.childIndexes(index).map((childIndex, n) => {
      const child = model.entry(childIndex);
      const current = this.#onPath.has(childIndex);
      return el(
        "button",
        { type: "button", class: current ? "branch-link current" : "branch-link", "data-action": "open-branch", "data-entry": child.id, "aria-current": current ? "true" : undefined },
        `${n + 1}. ${oneLine(branchPreview(child, model), 60)}`,
      );
    });
    return el("div", { class: "branch-point" }, el("span", { class: "branch-point-label" }, forkIcon(), `${branches.length} branches diverge here:`), ...branches);
  }

  // --- clicks ------------------------------------------------------------------------------

  async #onClick(event: MouseEvent): Promise<void> {
    const target = event.target as Element;
    const actionElement = target.closest<HTMLElement>("[data-action]");
    const action = actionElement?.dataset.action;
    if (!action || !actionElement) return;
    const entryId = target.closest<HTMLElement>("[data-entry-id]")?.dataset.entryId;
    switch (action) {
      case "toggle": {
        if (window.getSelection()?.toString()) return;
        const key = actionElement.dataset.key!;
        const open = actionElement.getAttribute("aria-expanded") === "true";
        this.#expanded.set(key, !open);
        if (entryId) this.#list.refreshKey(entryId);
        break;
      }
      case "copy-link":
        if (entryId) await this.#copyLink(entryId, actionElement);
        break;
      case "zoom-image": {
        const image = actionElement.querySelector("img");
        if (image?.src) openImageModal(image.src, image.alt, actionElement);
        break;
      }
      case "open-branch": {
        const child = actionElement.dataset.entry;
        if (child) this.#options.onOpenEntry(child);
        break;
      }
    }
  }

  async #copyLink(entryId: string, button: HTMLElement): Promise<void> {
    const link = this.#options.linkToEntry(entryId);
    // The address bar holds the link too: where the clipboard is not allowed, it can be copied from there.
    history.replaceState(null, "", link);
    let copied = false;
    try {
      await navigator.clipboard.writeText(link);
      copied = true;
    } catch {
      copied = false;
    }
    button.textContent = copied ? "✓" : "↗";
    button.title = copied ? "Link copied" : "Link in the address bar";
    setTimeout(() => {
      button.textContent = "#";
      button.title = "Copy a link to this entry";
    }, 1500);
  }

  // --- following and reading ---------------------------------------------------------------

  /** From the list's own figures (no layout is read): the view is within the slack of the end. */
  #isAtBottom(): boolean {
    return this.#list.distanceFromEnd() < FOLLOW_BOTTOM_SLACK;
  }

  #scrollToEnd(): void {
    const last = this.#listed.length - 1;
    if (last < 0) return;
    this.#list.scrollToIndex(last, "end");
    requestAnimationFrame(() => this.#list.scrollToIndex(last, "end"));
  }

  #onScroll(): void {
    const top = this.#list.scrollTop;
    this.#header.setScrolledAway(top > this.#headerHeight - this.#barHeight);
    if (!this.#readingScheduled) {
      this.#readingScheduled = true;
      requestAnimationFrame(() => {
        this.#readingScheduled = false;
        this.#reportReading();
      });
    }
    if (!this.#live) return;
    // Scrolling up pauses following; reaching the bottom again resumes it.
    if (top < this.#lastScrollTop - 2 && !this.#isAtBottom()) this.#followPaused = true;
    else if (this.#isAtBottom()) {
      this.#followPaused = false;
      this.#unseen = 0;
    }
    this.#updateFollowBar();
    this.#lastScrollTop = top;
  }

  /** The entry at the top of the reading area (under the header's line), or the last one at the bottom. */
  #reportReading(): void {
    if (this.#listed.length === 0) return;
    const index = this.#list.distanceFromEnd() < 4 ? this.#listed.length - 1 : Math.max(0, this.#list.indexAtViewY(this.#barHeight + 8));
    const listed = this.#listed[index];
    const id = listed === undefined ? undefined : this.#model.id(listed);
    if (id === undefined || id === this.#readingId) return;
    this.#readingId = id;
    this.#options.onReading(id);
  }

  #updateFollowBar(): void {
    const bar = this.followBar;
    if (!this.#live || this.#unseen === 0) {
      if (bar.querySelector("[data-action='resume-follow']")) bar.replaceChildren();
      bar.hidden = bar.childElementCount === 0;
      return;
    }
    bar.hidden = false;
    bar.replaceChildren(el("button", { type: "button", class: "new-chip", "data-action": "resume-follow", title: "To the newest entry, following again" }, `↓ ${this.#unseen} new`));
  }
}

function branchPreview(entry: SessionEntry, model: SessionModel): string {
  // The first entry with text down the branch's first chain.
  let current: SessionEntry | undefined = entry;
  for (let hops = 0; current && hops < 8; hops++) {
    const text = entry.type === "branch_summary" ? String(entry.summary ?? "") : current.type === "message" ? contentText(current.message?.content) : "";
    if (text.trim()) return text;
    const kids: SessionEntry[] = model.childrenOf(current.id);
    current = kids[kids.length - 1];
  }
  return entry.type;
}

/** A first guess of an entry's height before it is measured, from its bits. */
function estimateEntryHeight(flags: number): number {
  if (flags & EntryFlag.NotMessage) return 44;
  if (flags & EntryFlag.Assistant) return 180;
  if (flags & EntryFlag.User) return 90;
  return 120;
}
