/**
 * The view of one session: the tree sidebar (filters, search, "N / M entries", folding, keyboard),
 * the header (dates, models, counts, tokens, cost over all branches, actions) and the messages of
 * the root → leaf path. Both lists are virtualized: a 100,000-entry session keeps a few hundred
 * nodes in the DOM. The state that a link carries (leaf, target, filter, search) is reported
 * through `onState` and restored from `ViewState`.
 */
import type { SessionEntry } from "../../../src/format/types.js";
import { ImageSources } from "../data/images.js";
import { followSession, type LoadedSession, type SessionFollower } from "../data/load-session.js";
import { contentText } from "../model/content-text.js";
import { ENTRY_FILTERS, FILTER_LABELS, searchEntries, type EntryFilter } from "../model/filters.js";
import { layoutTree, type TreeLayout } from "../model/tree-layout.js";
import { el, forkIcon, formatDate, formatTokens, oneLine, type Child } from "../render/dom.js";
import { isListed, renderEntry, type EntryView } from "../render/entry.js";
import { highlightWithin } from "../render/highlight.js";
import { renderTreeRow } from "../render/tree-row.js";
import { VirtualList } from "./virtual-list.js";

export interface ViewState {
  leafId: string | null;
  targetId: string | null;
  filter: EntryFilter;
  query: string;
}

export interface SessionAction {
  id: string;
  label: string;
  title: string;
  run: (view: SessionView) => void | Promise<void>;
}

export interface SessionViewOptions {
  session: LoadedSession;
  /** What the header says about the file (load problems, findings). */
  notices?: Child[];
  initial?: Partial<ViewState>;
  actions: SessionAction[];
  /** The state changed (to keep the URL in step). */
  onState: (state: ViewState) => void;
  /** A link to `state` (for the copy-link buttons). */
  linkTo: (state: ViewState) => string;
  /** Offer following (the store can change while it is viewed). */
  followable: boolean;
}

const TREE_ROW_HEIGHT = 22;
const FOLLOW_BOTTOM_SLACK = 48;

export class SessionView {
  readonly element: HTMLElement;
  readonly session: LoadedSession;
  readonly #options: SessionViewOptions;
  readonly #images: ImageSources;
  #state: ViewState;
  #path: SessionEntry[] = [];
  #listed: SessionEntry[] = [];
  /** Height guesses of the listed entries, made once per path: the virtualizer asks for them often (per entry, per measurement). */
  #estimates = new Float64Array(0);
  #activePath = new Set<number>();
  #layout!: TreeLayout;
  #matches: Set<number> | null = null;
  #searchSeq = 0;
  #folded = new Set<string>();
  #cursorId: string | null = null;
  #thinkingVisible = true;
  #outputsExpanded = false;
  #expanded = new Map<string, boolean>();
  #tree!: VirtualList;
  #messages!: VirtualList;
  #follower: SessionFollower | null = null;
  #followPaused = false;
  #unseen = 0;
  readonly #dom: {
    search: HTMLInputElement;
    filters: HTMLElement;
    status: HTMLElement;
    treeScroll: HTMLElement;
    treeSpacer: HTMLElement;
    header: HTMLElement;
    messagesScroll: HTMLElement;
    messagesSpacer: HTMLElement;
    followBar: HTMLElement;
    sidebar: HTMLElement;
  };

  constructor(options: SessionViewOptions) {
    this.#options = options;
    this.session = options.session;
    this.#images = new ImageSources(options.session.storage);
    const model = this.session.model;
    const initial = options.initial ?? {};
    const leafId = initial.leafId && model.getEntry(initial.leafId) ? initial.leafId : model.fileLeafId;
    this.#state = {
      leafId,
      targetId: initial.targetId && model.getEntry(initial.targetId) ? initial.targetId : null,
      filter: initial.filter ?? "default",
      query: initial.query ?? "",
    };
    const targetCall = this.#callOfResult(this.#state.targetId);
    if (targetCall) this.#expanded.set(`${targetCall.id}:out`, true);

    const search = el("input", { type: "search", id: "tree-search", class: "sidebar-search", placeholder: "Search this session…", "aria-label": "Search this session", autocomplete: "off" });
    search.value = this.#state.query;
    const filters = el("div", { class: "sidebar-filters", role: "group", "aria-label": "Filter" });
    for (const filter of ENTRY_FILTERS) {
      filters.append(el("button", { type: "button", class: "filter-btn", "data-filter": filter, title: FILTER_LABELS[filter].title, "aria-pressed": "false" }, FILTER_LABELS[filter].label));
    }
    const treeSpacer = el("div", { class: "tree-spacer" });
    const treeScroll = el("div", { id: "tree", class: "tree-container", role: "tree", tabindex: "0", "aria-label": "Session tree" }, treeSpacer);
    const status = el("div", { id: "tree-status", class: "tree-status", "aria-live": "polite" });
    const closeSidebar = el("button", { type: "button", class: "sidebar-close", "data-action": "close-sidebar", title: "Close" }, "✕");
    const sidebar = el("aside", { id: "sidebar", class: "sidebar" }, el("div", { class: "sidebar-header" }, el("div", { class: "sidebar-controls" }, search, closeSidebar), filters), treeScroll, status);
    const header = el("div", { id: "session-header", class: "session-header" });
    const messagesSpacer = el("div", { class: "messages-spacer" });
    const messagesScroll = el("div", { id: "messages", class: "messages", tabindex: "-1" }, messagesSpacer);
    const followBar = el("div", { id: "follow-bar", class: "follow-bar", hidden: "" });
    const content = el("main", { id: "content", class: "content" }, header, messagesScroll, followBar);
    this.element = el("div", { class: "session-view" }, el("button", { type: "button", id: "menu", class: "menu-button", "data-action": "open-sidebar", title: "Session tree" }, "☰"), el("div", { class: "sidebar-overlay", "data-action": "close-sidebar" }), sidebar, content);
    this.#dom = { search, filters, status, treeScroll, treeSpacer, header, messagesScroll, messagesSpacer, followBar, sidebar };

    this.#tree = new VirtualList({
      scrollElement: treeScroll,
      container: treeSpacer,
      estimateSize: () => TREE_ROW_HEIGHT,
      fixedSize: true,
      overscan: 6,
      key: (r) => this.session.model.entries[this.#layout.entryIndex(r)]!.id,
      render: (r) => renderTreeRow(this.#layout.row(r), this.session.model, { activePath: this.#activePath, targetId: this.#state.targetId, cursorId: this.#cursorId }),
    });
    this.#messages = new VirtualList({
      scrollElement: messagesScroll,
      container: messagesSpacer,
      estimateSize: (i) => this.#estimates[i] ?? 60,
      // Items are costly (markdown, highlighting): one beyond each edge is enough to scroll into.
      overscan: 1,
      key: (i) => this.#listed[i]!.id,
      render: (i) => this.#renderListed(i),
      onScroll: () => this.#onMessagesScroll(),
    });
    this.#wire();
    this.#renderHeader();
    this.#applyPath();
    this.#relayout();
    this.#syncFilterButtons();
    if (this.#state.query) void this.#runSearch();
  }

  get state(): ViewState {
    return { ...this.#state };
  }

  /** Shows the path to the newest leaf under `entryId` and scrolls to that entry (pi's tree click). */
  openEntry(entryId: string): void {
    const model = this.session.model;
    if (!model.getEntry(entryId)) return;
    this.navigate(model.newestLeafUnder(entryId), entryId);
  }

  navigate(leafId: string | null, targetId: string | null): void {
    this.#state.leafId = leafId;
    this.#state.targetId = targetId;
    const call = this.#callOfResult(targetId);
    // A tool result is shown with its call: a link to it opens that output in full.
    if (call) this.#expanded.set(`${call.id}:out`, true);
    this.#applyPath();
    this.#tree.refresh();
    this.#emit();
  }

  /** Back to the session's own leaf, search cleared (Esc). */
  reset(): void {
    this.#dom.search.value = "";
    this.#state.query = "";
    this.#matches = null;
    this.#relayout();
    this.navigate(this.session.model.fileLeafId, null);
  }

  toggleThinking(): void {
    this.#thinkingVisible = !this.#thinkingVisible;
    this.#messages.refresh();
  }

  toggleOutputs(): void {
    this.#outputsExpanded = !this.#outputsExpanded;
    this.#expanded.clear();
    this.#messages.refresh();
  }

  setFilter(filter: EntryFilter): void {
    this.#state.filter = filter;
    this.#syncFilterButtons();
    this.#relayout();
    this.#emit();
  }

  /** The entries of the viewed branch, root → leaf. */
  branchEntries(): SessionEntry[] {
    return this.#path.slice();
  }

  /** Scrolls the message list by one message (j/k) or one user turn ([ and ]). */
  step(direction: 1 | -1, turns: boolean): void {
    const items = this.#messages.virtualizer.getVirtualItems();
    const offset = this.#dom.messagesScroll.scrollTop;
    const current = items.find((item) => item.end > offset + 4)?.index ?? 0;
    let i = current + direction;
    if (turns) while (i >= 0 && i < this.#listed.length && !isUserMessage(this.#listed[i]!)) i += direction;
    i = Math.max(0, Math.min(this.#listed.length - 1, i));
    this.#messages.scrollToIndex(i, "start");
  }

  focusTree(): void {
    this.#dom.treeScroll.focus();
  }

  async setFollowing(on: boolean): Promise<void> {
    if (on === (this.#follower !== null)) return;
    if (!on) {
      const follower = this.#follower;
      this.#follower = null;
      await follower?.stop();
    } else {
      this.#followPaused = false;
      this.#follower = await followSession(this.session, {
        onAppend: () => this.#onAppend(),
        onReplaced: () => this.#showFollowBar("The file was replaced: reopen the session to see it."),
        onError: (error) => this.#showFollowBar(`Following stopped: ${error instanceof Error ? error.message : String(error)}`),
      });
    }
    this.#renderHeader();
  }

  get following(): boolean {
    return this.#follower !== null;
  }

  async destroy(): Promise<void> {
    await this.setFollowing(false);
    this.#tree.destroy();
    this.#messages.destroy();
    this.#images.dispose();
    this.element.remove();
  }

  // --- state -------------------------------------------------------------------------------

  #emit(): void {
    this.#options.onState(this.state);
  }

  #applyPath(): void {
    const model = this.session.model;
    const indexes = model.pathIndexes(this.#state.leafId);
    this.#path = indexes.map((i) => model.entries[i]!);
    this.#activePath = new Set(indexes);
    const view = { model };
    this.#setListed(this.#path.filter((e) => isListed(e, view)));
    this.#messages.refresh();
    const target = this.#shownTarget();
    const index = target === null ? -1 : this.#listed.findIndex((e) => e.id === target);
    // Scroll twice: once to the estimate, once more after the items there were measured.
    const scroll = () => (index >= 0 ? this.#messages.scrollToIndex(index, "center") : this.#messages.scrollToIndex(this.#listed.length - 1, "end"));
    scroll();
    requestAnimationFrame(() => {
      scroll();
      requestAnimationFrame(scroll);
    });
  }

  #setListed(listed: SessionEntry[]): void {
    this.#listed = listed;
    this.#estimates = new Float64Array(listed.length);
    for (let i = 0; i < listed.length; i++) this.#estimates[i] = estimateEntryHeight(listed[i]);
    this.#messages.setCount(listed.length);
  }

  #relayout(): void {
    const model = this.session.model;
    this.#layout = layoutTree(model, { filter: this.#state.filter, matches: this.#matches, activePath: this.#activePath, leafId: this.#state.leafId, folded: this.#folded });
    this.#tree.setCount(this.#layout.count);
    this.#tree.refresh();
    this.#dom.status.textContent = `${this.#layout.shown.toLocaleString("en-US")} / ${this.#layout.total.toLocaleString("en-US")} entries`;
    const focus = this.#state.targetId ?? this.#state.leafId;
    const row = focus === null ? -1 : this.#layout.rowOfEntry(model.indexOf(focus) ?? -1);
    if (row >= 0) this.#tree.scrollToIndex(row, "center");
  }

  async #runSearch(): Promise<void> {
    const seq = ++this.#searchSeq;
    const query = this.#state.query.trim();
    if (!query) {
      this.#matches = null;
      this.#relayout();
      return;
    }
    const matches = await searchEntries(this.session.model, query, () => seq === this.#searchSeq);
    if (matches === null) return;
    this.#matches = matches;
    this.#relayout();
  }

  #syncFilterButtons(): void {
    for (const button of this.#dom.filters.querySelectorAll<HTMLElement>(".filter-btn")) {
      const active = button.dataset.filter === this.#state.filter;
      button.classList.toggle("active", active);
      button.setAttribute("aria-pressed", String(active));
    }
  }

  // --- rendering ---------------------------------------------------------------------------

  #entryView(): EntryView {
    return {
      model: this.session.model,
      thinkingVisible: this.#thinkingVisible,
      outputsExpanded: this.#outputsExpanded,
      expanded: this.#expanded,
      imageSource: (block) => this.#images.source(block),
      targetId: this.#shownTarget(),
    };
  }

  /** The tool call a tool result entry answers, when the session has it (the result is then shown with the call). */
  #callOfResult(entryId: string | null): { id: string; entryId: string } | undefined {
    const entry = entryId === null ? undefined : this.session.model.getEntry(entryId);
    if (entry?.type !== "message" || typeof entry.message !== "object" || entry.message === null || entry.message.role !== "toolResult") return undefined;
    return this.session.model.toolCalls.get(String(entry.message.toolCallId));
  }

  /** The listed entry showing the target: its own, or for a tool result its call's. */
  #shownTarget(): string | null {
    return this.#callOfResult(this.#state.targetId)?.entryId ?? this.#state.targetId;
  }

  #renderListed(i: number): HTMLElement | null {
    const entry = this.#listed[i]!;
    const model = this.session.model;
    const item = renderEntry(entry, this.#entryView());
    if (!item) return null;
    const index = model.indexOf(entry.id)!;
    if (model.childCount(index) > 1) item.append(this.#branchPoint(entry));
    highlightWithin(item);
    return el("div", { class: "entry-slot" }, item);
  }

  /** Where branches split: each branch, to open it. */
  #branchPoint(entry: SessionEntry): HTMLElement {
    const model = this.session.model;
    const next = this.#path[this.#path.indexOf(entry) + 1];
    const branches = model.childrenOf(entry.id).map((child, n) => {
      const current = child === next;
      return el(
        "button",
        { type: "button", class: current ? "branch-link current" : "branch-link", "data-action": "open-branch", "data-entry": child.id, "aria-current": current ? "true" : undefined },
        `${n + 1}. ${oneLine(branchPreview(child, model), 60)}`,
      );
    });
    return el("div", { class: "branch-point" }, el("span", { class: "branch-point-label" }, forkIcon(), `${branches.length} branches diverge here:`), ...branches);
  }

  #renderHeader(): void {
    const model = this.session.model;
    const { stats, header } = model;
    const tokens = [
      stats.tokens.input && `↑${formatTokens(stats.tokens.input)}`,
      stats.tokens.output && `↓${formatTokens(stats.tokens.output)}`,
      stats.tokens.cacheRead && `R${formatTokens(stats.tokens.cacheRead)}`,
      stats.tokens.cacheWrite && `W${formatTokens(stats.tokens.cacheWrite)}`,
    ].filter(Boolean);
    const counts = [
      stats.userMessages && `${stats.userMessages} user`,
      stats.assistantMessages && `${stats.assistantMessages} assistant`,
      stats.toolResults && `${stats.toolResults} tool results`,
      stats.customMessages && `${stats.customMessages} custom`,
      stats.compactions && `${stats.compactions} compactions`,
      stats.branchSummaries && `${stats.branchSummaries} branch summaries`,
    ].filter(Boolean);
    const dates = stats.lastTimestamp && stats.lastTimestamp !== header.timestamp ? `${formatDate(header.timestamp)} → ${formatDate(stats.lastTimestamp)}` : formatDate(header.timestamp);
    const item = (name: string, label: string, value: string) => el("div", { class: "info-item", "data-field": name }, el("span", { class: "info-label" }, `${label}:`), el("span", { class: "info-value" }, value));
    const actions = this.#options.actions.map((action) => el("button", { type: "button", class: "header-btn", id: `action-${action.id}`, "data-action-id": action.id, title: action.title }, action.label));
    if (this.#options.followable) {
      actions.push(el("button", { type: "button", class: this.following ? "header-btn on" : "header-btn", id: "action-follow", "data-action": "follow", "aria-pressed": String(this.following), title: "Show entries as they are written" }, this.following ? "● Following" : "Follow"));
    }
    this.#dom.header.replaceChildren(
      el("h1", { class: "session-title" }, model.sessionName() ?? `Session: ${header.id}`),
      el(
        "div",
        { class: "header-info" },
        item("id", "Id", header.id),
        item("date", "Date", dates),
        typeof header.cwd === "string" && item("cwd", "Dir", header.cwd),
        item("models", "Models", stats.models.join(", ") || "unknown"),
        item("messages", "Messages", counts.join(", ") || "0"),
        item("tool-calls", "Tool calls", String(stats.toolCalls)),
        item("tokens", "Tokens", tokens.join(" ") || "0"),
        item("cost", "Cost", `$${stats.cost.total.toFixed(3)}`),
        item("entries", "Entries", model.size.toLocaleString("en-US")),
      ),
      el("div", { class: "notices" }, ...(this.#options.notices ?? [])),
      el("div", { class: "help-bar" }, el("span", { class: "help-hint" }, "T thinking · O outputs · J/K messages · [ ] turns · Esc back to leaf · ? keys"), el("div", { class: "header-actions" }, ...actions)),
    );
  }

  // --- following ---------------------------------------------------------------------------

  #onAppend(): void {
    const model = this.session.model;
    const wasAtLeaf = this.#path.length === 0 || this.#state.leafId === this.#path[this.#path.length - 1]?.id;
    const previousLeaf = this.#state.leafId;
    // The viewed branch grows when the new entries continue it.
    const newLeaf = model.fileLeafId;
    const continues = wasAtLeaf && newLeaf !== null && (previousLeaf === null || model.pathTo(newLeaf).some((e) => e.id === previousLeaf));
    const atBottom = this.#isAtBottom();
    if (continues) {
      this.#state.leafId = newLeaf;
      const before = this.#listed.length;
      const indexes = model.pathIndexes(newLeaf);
      this.#path = indexes.map((i) => model.entries[i]!);
      this.#activePath = new Set(indexes);
      const view = { model };
      this.#setListed(this.#path.filter((e) => isListed(e, view)));
      const grown = this.#listed.length - before;
      if (atBottom && !this.#followPaused) this.#scrollToEnd();
      else this.#unseen += grown;
      this.#emit();
    }
    this.#renderHeader();
    this.#relayout();
    this.#updateFollowBar();
  }

  #isAtBottom(): boolean {
    const scroll = this.#dom.messagesScroll;
    return scroll.scrollHeight - scroll.scrollTop - scroll.clientHeight < FOLLOW_BOTTOM_SLACK;
  }

  #scrollToEnd(): void {
    const last = this.#listed.length - 1;
    if (last < 0) return;
    this.#messages.scrollToIndex(last, "end");
    requestAnimationFrame(() => this.#messages.scrollToIndex(last, "end"));
  }

  #lastScrollTop = 0;
  #onMessagesScroll(): void {
    // Reading the scroll position forces a layout: only while following, where it matters.
    if (!this.#follower) return;
    const top = this.#dom.messagesScroll.scrollTop;
    {
      // Scrolling up pauses following; reaching the bottom again resumes it.
      if (top < this.#lastScrollTop - 2 && !this.#isAtBottom()) this.#followPaused = true;
      else if (this.#isAtBottom()) {
        this.#followPaused = false;
        this.#unseen = 0;
      }
      this.#updateFollowBar();
    }
    this.#lastScrollTop = top;
  }

  #updateFollowBar(): void {
    const bar = this.#dom.followBar;
    if (!this.#follower) {
      bar.hidden = true;
      return;
    }
    if (!this.#followPaused && this.#unseen === 0) {
      bar.hidden = true;
      return;
    }
    bar.hidden = false;
    bar.replaceChildren(
      el("span", { class: "follow-state" }, this.#followPaused ? "Following paused (scrolled up)" : "Following"),
      el("button", { type: "button", class: "header-btn", "data-action": "resume-follow" }, this.#unseen > 0 ? `↓ ${this.#unseen} new` : "↓ Resume"),
    );
  }

  #showFollowBar(message: string): void {
    this.#dom.followBar.hidden = false;
    this.#dom.followBar.replaceChildren(el("span", { class: "follow-state" }, message));
  }

  // --- events ------------------------------------------------------------------------------

  #wire(): void {
    const { search, filters, treeScroll } = this.#dom;
    let debounce: ReturnType<typeof setTimeout> | undefined;
    search.addEventListener("input", () => {
      clearTimeout(debounce);
      debounce = setTimeout(() => {
        this.#state.query = search.value;
        this.#emit();
        void this.#runSearch();
      }, 120);
    });
    filters.addEventListener("click", (event) => {
      const button = (event.target as Element).closest<HTMLElement>(".filter-btn");
      if (button?.dataset.filter) this.setFilter(button.dataset.filter as EntryFilter);
    });
    treeScroll.addEventListener("click", (event) => {
      const target = event.target as Element;
      const row = target.closest<HTMLElement>(".tree-node");
      const id = row?.dataset.entryId;
      if (!id) return;
      if (target.closest("[data-action='fold']")) {
        this.#toggleFold(id);
        return;
      }
      if (window.getSelection()?.toString()) return;
      this.#cursorId = id;
      this.#closeSidebar();
      this.openEntry(id);
    });
    treeScroll.addEventListener("keydown", (event) => this.#treeKey(event));
    this.element.addEventListener("click", (event) => void this.#onClick(event));
  }

  async #onClick(event: MouseEvent): Promise<void> {
    const target = event.target as Element;
    const actionId = target.closest<HTMLElement>("[data-action-id]")?.dataset.actionId;
    if (actionId) {
      await this.#options.actions.find((a) => a.id === actionId)?.run(this);
      return;
    }
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
        if (entryId) this.#messages.refreshKey(entryId);
        break;
      }
      case "copy-link":
        if (entryId) await this.#copyLink(entryId, actionElement);
        break;
      case "zoom-image":
        if (target instanceof HTMLImageElement) openImageModal(target.src, target.alt);
        break;
      case "open-branch": {
        const child = actionElement.dataset.entry;
        if (child) this.openEntry(child);
        break;
      }
      case "follow":
        await this.setFollowing(!this.following);
        break;
      case "resume-follow":
        this.#followPaused = false;
        this.#unseen = 0;
        this.#scrollToEnd();
        this.#updateFollowBar();
        break;
      case "open-sidebar":
        this.element.classList.add("sidebar-open");
        break;
      case "close-sidebar":
        this.#closeSidebar();
        break;
    }
  }

  #closeSidebar(): void {
    this.element.classList.remove("sidebar-open");
  }

  async #copyLink(entryId: string, button: HTMLElement): Promise<void> {
    const link = this.#options.linkTo({ ...this.state, targetId: entryId });
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

  #toggleFold(id: string): void {
    if (this.#folded.has(id)) this.#folded.delete(id);
    else this.#folded.add(id);
    this.#cursorId = id;
    this.#relayout();
  }

  #treeKey(event: KeyboardEvent): void {
    const layout = this.#layout;
    if (layout.count === 0) return;
    const model = this.session.model;
    const currentId = this.#cursorId ?? this.#state.targetId ?? this.#state.leafId;
    let row = currentId === null ? 0 : Math.max(0, layout.rowOfEntry(model.indexOf(currentId) ?? -1));
    const moveTo = (r: number) => {
      row = Math.max(0, Math.min(layout.count - 1, r));
      this.#cursorId = model.entries[layout.entryIndex(row)]!.id;
      this.#tree.refresh();
      this.#tree.scrollToIndex(row, "auto");
    };
    const id = () => model.entries[layout.entryIndex(row)]!.id;
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
        this.openEntry(id());
        break;
      default:
        return;
    }
    event.preventDefault();
    event.stopPropagation();
  }
}

function isUserMessage(entry: SessionEntry): boolean {
  return entry.type === "message" && typeof entry.message === "object" && entry.message !== null && entry.message.role === "user";
}

function branchPreview(entry: SessionEntry, model: LoadedSession["model"]): string {
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

/** A first guess of an entry's height before it is measured. */
function estimateEntryHeight(entry: SessionEntry | undefined): number {
  if (!entry) return 60;
  if (entry.type !== "message") return 44;
  const role = typeof entry.message === "object" && entry.message !== null ? entry.message.role : "";
  if (role === "assistant") return 180;
  if (role === "user") return 90;
  return 120;
}

let modal: HTMLElement | null = null;

/** The image at full size over the page; a click or Esc closes it. */
export function openImageModal(src: string, alt: string): void {
  closeImageModal();
  const image = el("img", { alt });
  image.src = src;
  modal = el("div", { id: "image-modal", class: "image-modal", role: "dialog", "aria-label": "Image" }, image);
  modal.addEventListener("click", closeImageModal);
  document.body.append(modal);
}

export function closeImageModal(): boolean {
  if (!modal) return false;
  modal.remove();
  modal = null;
  return true;
}
