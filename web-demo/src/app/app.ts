/**
 * The viewer app over a StoreSource: the list of every session across its stores (filtered as
 * you type), search across sessions (session-search.ts), one session open in a SessionView, the address kept in step
 * with what is shown, keys, theme. main.ts runs it over the browser's store, export-main.ts over
 * the session an exported HTML file carries.
 *
 * The list leaves the messages their width: from 1500 px wide it is a column beside the session,
 * narrower it is a drawer over it (☰ Sessions), closed once a session is chosen. "Pin" docks it
 * (or the drawer again), remembered per browser.
 */
import { BlobStore } from "../../../src/blobs/blob-store.js";
import { encodeJsonl } from "../../../src/format/session-file.js";
import { resolveImages } from "../../../src/blobs/images.js";
import type { SessionEntry } from "../../../src/format/types.js";
import { LoadCancelled, loadSession, ONE_TASK_BYTES, readSessionTail, type LoadedSession } from "../data/load-session.js";
import type { ListedSession, StoreSource, ViewerStore } from "../data/source.js";
import { append, dateText, el, formatBytes, preview, type Child } from "../render/dom.js";
import { yieldToEventLoop } from "../model/filters.js";
import { renderError } from "../render/import-report.js";
import { readLink, linkHash, linkUrl, type LinkState } from "./links.js";
import { closeImageModal } from "./image-modal.js";
import { SessionSearch } from "./session-search.js";
import { SessionView, type SessionAction } from "./session-view.js";
import { themeButton } from "./theme.js";
import { closeInsights, insightsAction, insightsButton, readInsightsLink, type InsightsHost, type OpenInsights } from "../insights/link.js";

export interface AppOptions {
  source: StoreSource;
  /** Controls for the bar (storage choice, import). */
  barControls?: Child[];
  /** Actions on the open session beyond the downloads (export, delete). */
  sessionActions?: (store: ViewerStore, path: string) => SessionAction[];
  /**
   * A notice about the open session made after it is shown (its secrets): `linkTo` an entry's
   * address, `open` an entry in the view.
   */
  sessionNotice?: (session: LoadedSession, linkTo: (entryId: string) => string, open: (entryId: string) => void) => Promise<HTMLElement | null>;
  /** Show the list of sessions (an exported file has one session: no list). */
  showList: boolean;
  title: string;
  /** What the session pane says when no store holds a session. */
  emptyText?: string;
  /** The insights view, where it is offered (web-demo/src/insights/open.ts). */
  insights?: OpenInsights;
}

const LIST_KEY = "sessionkit-viewer.list";
/**
 * A session file larger than this opens on a preview of its end (its last PREVIEW_BYTES) while
 * the rest is read: over `sessionkit serve` a 1 GiB file takes 10 s and more to arrive.
 */
const PREVIEW_FROM_BYTES = 32 << 20;
const PREVIEW_BYTES = 2 << 20;
/** Wide enough for the list, the tree and a message column of 760 px and more. */
const WIDE = "(min-width: 1500px)";
/** Too narrow for a docked list whatever the choice: it is a drawer. */
const NARROW = "(max-width: 900px)";

function savedListChoice(): "docked" | "drawer" | null {
  try {
    const value = localStorage.getItem(LIST_KEY);
    return value === "docked" || value === "drawer" ? value : null;
  } catch {
    return null; // storage refused
  }
}

export class ViewerApp {
  source: StoreSource;
  readonly #options: AppOptions;
  #sessions: ListedSession[] = [];
  #view: SessionView | null = null;
  #open: { storeId: string; path: string } | null = null;
  /** Counts openSession calls: a session still loading when another is opened is dropped. */
  #opening = 0;
  readonly #listFilter: HTMLInputElement;
  readonly #storeFilter: HTMLSelectElement;
  readonly #list: HTMLElement;
  readonly #search: SessionSearch;
  readonly #sessionPane: HTMLElement;
  readonly #notices: HTMLElement;
  readonly root: HTMLElement;
  #tasks = 0;
  readonly #listToggle: HTMLButtonElement | null;
  readonly #listPin: HTMLButtonElement;
  #listDocked: boolean;

  constructor(options: AppOptions) {
    this.#options = options;
    this.source = options.source;
    this.#listFilter = el("input", { type: "search", id: "session-filter", placeholder: "Filter sessions…", "aria-label": "Filter sessions", autocomplete: "off" });
    this.#storeFilter = el("select", { id: "store-filter", "aria-label": "Store" });
    this.#list = el("div", { id: "session-list", class: "session-list" });
    this.#search = new SessionSearch({
      source: options.source,
      sessions: () => this.#sessions,
      run: (task) => void this.run(task),
      onOpen: (storeId, path, entryId) => {
        this.#closeDrawer();
        void this.run(() => this.openSession(storeId, path, entryId ? { targetId: entryId, leafId: null, openEntry: true } : {}));
      },
    });
    this.#sessionPane = el("main", { id: "session-pane", class: "session-pane", "aria-label": "Session" });
    this.#notices = el("div", { id: "notices", class: "notices-bar", "aria-live": "polite" });
    this.#listPin = el("button", { type: "button", id: "list-pin", class: "header-btn", "aria-pressed": "false", title: "Keep the list beside the session (remembered)" }, "Pin");
    const listPane = el(
      "nav",
      { id: "list-pane", class: "list-pane", "aria-label": "Sessions" },
      el(
        "div",
        { class: "list-controls" },
        el("div", { class: "list-heading" }, el("h2", {}, "Sessions"), this.#listPin),
        this.#listFilter,
        this.#storeFilter,
        ...(options.source.searchSessions ? this.#search.controls : []),
      ),
      this.#search.results,
      this.#list,
    );
    const bar = el(
      "header",
      { class: "app-bar" },
      options.showList && el("button", { type: "button", id: "sessions-toggle", class: "header-btn", "aria-controls": "list-pane", "aria-expanded": "false", title: "Show or hide the list of sessions" }, "☰ Sessions"),
      el("span", { class: "app-title" }, options.title),
      ...(options.barControls ?? []),
      el("span", { class: "spacer" }),
      options.insights && insightsButton(),
      themeButton(),
      el("button", { type: "button", id: "keys-help", class: "header-btn", title: "Keys (?)" }, "?"),
    );
    const listShade = el("div", { class: "list-shade" });
    this.root = el("div", { class: "app" }, bar, this.#notices, el("div", { class: "app-body" }, options.showList && listPane, options.showList && listShade, this.#sessionPane));
    this.#listToggle = bar.querySelector<HTMLButtonElement>("#sessions-toggle");
    this.#listDocked = savedListChoice() === "docked" || (savedListChoice() === null && window.matchMedia(WIDE).matches);
    this.#syncList();
    this.#listToggle?.addEventListener("click", () => {
      if (this.#listShown()) this.#hideList();
      else this.#openDrawer();
    });
    this.#listPin.addEventListener("click", () => this.#setDocked(!this.#listDocked));
    listShade.addEventListener("click", () => this.#closeDrawer());
    window.matchMedia(NARROW).addEventListener("change", () => this.#syncList());
    bar.querySelector("#keys-help")!.addEventListener("click", () => toggleKeysHelp());
    this.#listFilter.addEventListener("input", () => this.#renderList());
    this.#storeFilter.addEventListener("change", () => this.#renderList());
    this.#list.addEventListener("click", (event) => {
      const item = (event.target as Element).closest<HTMLElement>("[data-path]");
      if (!item) return;
      this.#closeDrawer();
      void this.run(() => this.openSession(item.dataset.store!, item.dataset.path!, {}));
    });
    document.addEventListener("keydown", (event) => this.#onKey(event));
    window.addEventListener("hashchange", () => void this.run(async () => void (await this.#followAddress())));
  }

  /** Runs one task at a time; a failure is shown, never swallowed; body[data-status] says when all is done. */
  run(task: () => Promise<void>): Promise<void> {
    this.#tasks++;
    document.body.dataset.status = "busy";
    return task()
      .catch((error: unknown) => {
        console.error(error);
        this.notify(renderError(error));
      })
      .finally(() => {
        if (--this.#tasks === 0) document.body.dataset.status = "ready";
      });
  }

  /** The list as a column (docked, not on a narrow screen) or as the open drawer. */
  #listShown(): boolean {
    return (this.#listDocked && !window.matchMedia(NARROW).matches) || this.root.classList.contains("list-drawer-open");
  }

  #syncList(): void {
    this.root.classList.toggle("list-docked", this.#listDocked);
    this.#listPin.setAttribute("aria-pressed", String(this.#listDocked));
    this.#listPin.textContent = this.#listDocked ? "Unpin" : "Pin";
    this.#listToggle?.setAttribute("aria-expanded", String(this.#listShown()));
  }

  #setDocked(docked: boolean): void {
    this.#listDocked = docked;
    try {
      localStorage.setItem(LIST_KEY, docked ? "docked" : "drawer");
    } catch {
      // not remembered, still applied
    }
    this.root.classList.remove("list-drawer-open");
    this.#syncList();
  }

  #openDrawer(): void {
    this.root.classList.add("list-drawer-open");
    this.#syncList();
    this.#listFilter.focus();
  }

  /** Closes the drawer, if open; true when it was. */
  #closeDrawer(): boolean {
    if (!this.root.classList.contains("list-drawer-open")) return false;
    this.root.classList.remove("list-drawer-open");
    this.#syncList();
    // Focus left in the hidden list goes back to the button that opened it.
    if (this.#list.parentElement?.contains(document.activeElement)) this.#listToggle?.focus();
    return true;
  }

  /** ☰ Sessions on a shown list: a docked one is undocked (remembered), a drawer closed. */
  #hideList(): void {
    if (this.#closeDrawer()) return;
    this.#setDocked(false);
  }

  notify(content: HTMLElement): void {
    const dismiss = el("button", { type: "button", class: "dismiss", "aria-label": "Dismiss" }, "×");
    const box = el("div", { class: "message-box" }, content, dismiss);
    dismiss.addEventListener("click", () => box.remove());
    this.#notices.replaceChildren(box);
  }

  clearNotices(): void {
    this.#notices.replaceChildren();
  }

  get view(): SessionView | null {
    return this.#view;
  }

  get sessions(): readonly ListedSession[] {
    return this.#sessions;
  }

  async refreshList(): Promise<void> {
    this.#sessions = await this.source.listSessions();
    this.#renderStoreFilter();
    this.#renderList();
  }

  /** With several stores: a choice of one (each with its agent, place and count) or all. */
  #renderStoreFilter(): void {
    const stores = this.source.stores;
    const chosen = this.#storeFilter.value;
    this.#storeFilter.hidden = stores.length < 2;
    const count = (id: string) => this.#sessions.filter((s) => s.storeId === id).length;
    this.#storeFilter.replaceChildren(
      el("option", { value: "" }, `All ${stores.length} stores (${this.#sessions.length})`),
      ...stores.map((store) => el("option", { value: store.id, "data-agent": store.agent }, `${store.label} (${count(store.id)})`)),
    );
    this.#storeFilter.value = stores.some((store) => store.id === chosen) ? chosen : "";
  }

  /**
   * Opens what the address names, or the newest session (the user's: samples are listed after
   * them). A session the address names is shown first and the list read after (every store's
   * sessions: many reads, and work the first screen would wait for); the insights view needs the
   * list first.
   */
  async start(): Promise<void> {
    const opened = readLink().path !== null && readInsightsLink() === null && (await this.#followAddress());
    // A store of many or large sessions takes a while to list the first time: say so meanwhile.
    this.#list.replaceChildren(el("p", { class: "list-count" }, "Listing sessions…"));
    if (!opened) this.#sessionPane.replaceChildren(el("div", { class: "loading" }, el("p", { role: "status" }, "Listing sessions…")));
    await this.refreshList();
    if (!opened && !(await this.#followAddress())) {
      const first = this.#sessions[0];
      if (first) await this.openSession(first.storeId, first.path, {});
      else this.#sessionPane.replaceChildren(el("p", { class: "empty" }, this.#options.emptyText ?? "No sessions. Import a .jsonl or .zip file."));
    }
  }

  async #followAddress(): Promise<boolean> {
    const insights = readInsightsLink();
    if (insights && this.#options.insights) return this.#options.insights(insights, this.#insightsHost());
    closeInsights(this.#sessionPane);
    const link = readLink();
    if (!link.path) return false;
    const store = link.store ?? this.source.stores[0]?.id;
    if (!store) return false;
    const current = this.#view?.state;
    if (this.#open?.storeId === store && this.#open.path === link.path && current) {
      if (current.leafId !== link.leafId || current.targetId !== link.targetId) this.#view!.navigate(link.leafId ?? this.#view!.session.model.fileLeafId, link.targetId);
      if (current.filter !== link.filter) this.#view!.setFilter(link.filter);
      return true;
    }
    await this.openSession(store, link.path, link);
    return true;
  }

  async openSession(storeId: string, path: string, initial: Partial<LinkState> & { openEntry?: boolean }): Promise<void> {
    const store = this.source.stores.find((s) => s.id === storeId);
    if (!store) throw new Error(`no store "${storeId}" in this viewer`);
    const opening = ++this.#opening;
    const isCurrent = () => opening === this.#opening;
    await this.#view?.destroy();
    this.#view = null;
    this.#open = null;
    const progress = el("progress", { max: "1", value: "0" });
    const progressText = el("span", {}, "");
    this.#sessionPane.replaceChildren(el("div", { class: "loading" }, el("p", {}, "Opening…"), progress));
    const loading = loadSession(store.storage, path, {
      isCurrent,
      onProgress: (read, total) => {
        progress.value = total > 0 ? read / total : 1;
        progressText.textContent = `${formatBytes(read)} of ${formatBytes(total)}`;
      },
    });
    // Awaited below; until then a failure must not count as unhandled.
    loading.catch(() => {});
    let preview: SessionView | null = null;
    let session: LoadedSession;
    try {
      preview = initial.leafId || initial.targetId ? null : await this.#preview(store, path, loading, el("div", { class: "reading-progress", role: "status" }, el("p", {}, "Reading the whole session: the tree, the figures and every branch come with it."), progress, progressText));
      if (preview && isCurrent()) {
        this.#sessionPane.replaceChildren(preview.element);
        await preview.start();
      }
      session = await loading;
    } catch (error) {
      await preview?.destroy();
      if (error instanceof LoadCancelled) return;
      throw error;
    }
    const keepPlace = preview?.readingAwayFromEnd() ?? null;
    await preview?.destroy();
    if (!isCurrent()) return;
    // The view's set-up (path, tree layout, first items) in a task of its own, not after the last
    // range's parsing; but a session small enough to be indexed in one go is shown in the same
    // task: a yield there lets the browser paint "Opening…" first, a frame before the first entry.
    if (session.completeBytes > ONE_TASK_BYTES) {
      await yieldToEventLoop();
      if (!isCurrent()) return;
    }
    this.#open = { storeId, path };
    const notices = loadNotices(session);
    const openedNotices = notices.length;
    const actions = [...downloadActions(), ...(this.#options.sessionActions?.(store, path) ?? [])];
    if (this.#options.insights) actions.push(insightsAction(storeId, path));
    const view = new SessionView({
      session,
      notices,
      initial: { leafId: initial.leafId ?? null, targetId: initial.targetId ?? null, filter: initial.filter ?? "default", query: initial.query ?? "" },
      actions,
      followable: this.source.live,
      onState: (state) => history.replaceState(null, "", linkHash({ store: storeId, path, ...state })),
      linkTo: (state) => linkUrl({ store: storeId, path, ...state }),
    });
    this.#view = view;
    this.#sessionPane.replaceChildren(view.element);
    await view.start();
    if (this.#view !== view) return; // another session was opened meanwhile
    if (initial.openEntry && initial.targetId) view.openEntry(initial.targetId);
    if (keepPlace !== null) view.scrollToEntry(keepPlace);
    history.replaceState(null, "", linkHash({ store: storeId, path, ...view.state }));
    this.#renderList();
    const sessionNotice = this.#options.sessionNotice;
    // After the first render (a large session's secrets take a while to find).
    if (sessionNotice) void this.run(async () => {
      const linkTo = (entryId: string) => linkUrl({ store: storeId, path, leafId: null, targetId: entryId, filter: "default", query: "" });
      const notice = await sessionNotice(session, linkTo, (entryId) => view.openEntry(entryId));
      if (!notice || this.#view !== view || notices.length !== openedNotices) return;
      // The header draws its notices from this array again when it re-renders (following).
      notices.push(notice);
      view.addNotice(notice);
    });
  }

  /**
   * The end of a large session as a preview, shown while `loading` reads the whole file (null for
   * a file small enough to wait for, or when the whole file is read first).
   */
  async #preview(store: ViewerStore, path: string, loading: Promise<LoadedSession>, reading: HTMLElement): Promise<SessionView | null> {
    const size = (await store.storage.stat(path))?.size ?? 0;
    if (size < PREVIEW_FROM_BYTES) return null;
    const done = loading.then(
      () => null,
      () => null,
    );
    const tail = await Promise.race([readSessionTail(store.storage, path, PREVIEW_BYTES).catch(() => null), done]);
    if (!tail) return null;
    const session: LoadedSession = { storage: store.storage, path, model: tail.model, problems: [], migratedFrom: null, dialect: tail.model.dialect, completeBytes: tail.size };
    return new SessionView({ session, reading, actions: [], followable: false, onState: () => {}, linkTo: (state) => linkUrl({ store: store.id, path, ...state }) });
  }

  #insightsHost(): InsightsHost {
    return {
      pane: this.#sessionPane,
      source: this.source,
      sessions: this.#sessions,
      current: () => (this.#open && this.#view ? { ...this.#open, session: this.#view.session, leafId: this.#view.state.leafId } : null),
      openSession: (storeId, path, leafId) => this.openSession(storeId, path, { leafId }),
      close: () => (location.hash = this.#open && this.#view ? linkHash({ store: this.#open.storeId, path: this.#open.path, ...this.#view.state }) : "#"),
    };
  }

  #renderList(): void {
    const words = this.#listFilter.value.toLowerCase().split(/\s+/).filter(Boolean);
    const storeId = this.#storeFilter.value;
    const shown = this.#sessions.filter((s) => {
      if (storeId !== "" && s.storeId !== storeId) return false;
      if (words.length === 0) return true;
      const text = `${s.name ?? ""} ${s.firstMessage} ${s.cwd} ${s.id}`.toLowerCase();
      return words.every((w) => text.includes(w));
    });
    const many = this.source.stores.length > 1;
    const item = (info: ListedSession) => {
      const selected = this.#open?.storeId === info.storeId && this.#open.path === info.path;
      const store = this.source.stores.find((s) => s.id === info.storeId);
      return el(
        "li",
        { class: selected ? "session selected" : "session", "aria-current": selected ? "true" : undefined },
        el(
          "button",
          { type: "button", "data-store": info.storeId, "data-path": info.path, title: info.path },
          el("span", { class: "session-title" }, info.name ?? (preview(info.firstMessage, 90) || "(no messages)")),
          info.name && info.firstMessage && el("span", { class: "session-first" }, preview(info.firstMessage, 90)),
          el(
            "span",
            { class: "session-meta" },
            el("time", { datetime: info.modified.toISOString() }, dateText(info.modified)),
            ` · ${info.messageCount} ${info.messageCount === 1 ? "message" : "messages"}`,
          ),
          el("span", { class: "session-cwd" }, info.cwd),
          many && store ? el("span", { class: "session-store" }, store.label) : null,
        ),
      );
    };
    // Samples come last (listSessions): under a heading of their own, so they are not taken for the user's.
    const sampleStores = new Set(this.source.stores.filter((store) => store.samples).map((store) => store.id));
    const listed = shown.slice(0, 500);
    const own = listed.filter((info) => !sampleStores.has(info.storeId));
    const samples = listed.filter((info) => sampleStores.has(info.storeId));
    this.#list.replaceChildren();
    append(
      this.#list,
      el("p", { class: "list-count" }, `${shown.length} of ${this.#sessions.length} sessions`),
      listed.length === 0 ? el("p", { class: "empty" }, this.#sessions.length === 0 ? "No sessions stored." : "No session matches.") : null,
      own.length > 0 ? el("ul", {}, ...own.map(item)) : null,
      samples.length > 0 ? el("h2", { class: "list-group", id: "samples-heading" }, "Samples", el("span", { class: "muted" }, " · made by sessionkit to show the viewer")) : null,
      samples.length > 0 ? el("ul", { "aria-labelledby": "samples-heading" }, ...samples.map(item)) : null,
    );
  }

  #onKey(event: KeyboardEvent): void {
    if (event.key === "Escape") {
      if (closeImageModal() || closeKeysHelp() || this.#closeDrawer()) return;
      this.#view?.reset();
      return;
    }
    const target = event.target as HTMLElement | null;
    if (target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA" || target.tagName === "SELECT" || target.isContentEditable)) return;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const view = this.#view;
    switch (event.key) {
      case "t":
        view?.toggleThinking();
        break;
      case "o":
        view?.toggleOutputs();
        break;
      case "j":
        view?.step(1, false);
        break;
      case "k":
        view?.step(-1, false);
        break;
      case "]":
        view?.step(1, true);
        break;
      case "[":
        view?.step(-1, true);
        break;
      case "g":
        view?.focusTree();
        break;
      case "/":
        (document.querySelector<HTMLInputElement>("#tree-search"))?.focus();
        break;
      case "?":
        toggleKeysHelp();
        break;
      default:
        return;
    }
    event.preventDefault();
  }
}

function loadNotices(session: LoadedSession): Child[] {
  const notices: Child[] = [];
  if (session.problems.length > 0) {
    notices.push(
      el(
        "details",
        { class: "notice load-notice" },
        el("summary", {}, `${session.problems.length} line(s) not read as written`),
        el("ul", {}, ...session.problems.slice(0, 100).map((p) => el("li", { "data-kind": p.kind }, p.message))),
      ),
    );
  }
  if (session.migratedFrom !== null) notices.push(el("p", { class: "notice" }, `Stored as version ${session.migratedFrom}; shown migrated to version 3 (the file is unchanged).`));
  return notices;
}

/** "↓ JSONL" of the whole session or of the viewed branch: a file pi opens, images inline again. */
function downloadActions(): SessionAction[] {
  const download = async (view: SessionView, entries: readonly SessionEntry[], suffix: string) => {
    const blobs = new BlobStore(view.session.storage);
    const resolved: unknown[] = [view.session.model.header];
    for (const entry of entries) resolved.push(await resolveImages(entry, blobs, () => {}));
    const id = view.session.model.header.id.replace(/[^A-Za-z0-9_-]/g, "_");
    downloadBlob(new Blob([encodeJsonl(resolved) as Uint8Array<ArrayBuffer>], { type: "application/x-ndjson" }), `${id}${suffix}.jsonl`);
  };
  return [
    { id: "jsonl", label: "↓ JSONL", title: "Download the session file (every branch)", run: (view) => download(view, view.session.model.allEntries(), "") },
    { id: "jsonl-branch", label: "↓ Branch JSONL", title: "Download the viewed branch (root → leaf) as a session file", run: (view) => download(view, view.branchEntries(), "-branch") },
  ];
}

/** Starts the browser's download of `blob`. */
export function downloadBlob(blob: Blob, fileName: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement("a");
  link.href = url;
  link.download = fileName;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  // The download holds its own reference once started; revoke later, not at once.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

const KEYS: [string, string][] = [
  ["t", "thinking shown / folded"],
  ["o", "tool outputs expanded / collapsed"],
  ["j / k", "next / previous message"],
  ["] / [", "next / previous user turn"],
  ["g", "focus the tree: ↑ ↓ move, ← → fold, Enter opens"],
  ["/", "search this session"],
  ["Esc", "close, clear the search, back to the session's leaf"],
  ["?", "these keys"],
];

let keysHelp: HTMLElement | null = null;

function toggleKeysHelp(): void {
  if (closeKeysHelp()) return;
  keysHelp = el("div", { id: "keys-dialog", class: "keys-dialog", role: "dialog", "aria-label": "Keys" }, el("h2", {}, "Keys"), el("dl", {}, ...KEYS.flatMap(([k, what]) => [el("dt", {}, el("kbd", {}, k)), el("dd", {}, what)])));
  keysHelp.addEventListener("click", () => closeKeysHelp());
  document.body.append(keysHelp);
}

function closeKeysHelp(): boolean {
  if (!keysHelp) return false;
  keysHelp.remove();
  keysHelp = null;
  return true;
}
