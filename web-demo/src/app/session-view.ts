/**
 * The view of one session, composed of its panels: the tree sidebar (tree-panel.ts), the header
 * (session-header.ts) and the messages of the root → leaf path with the "N new" chip
 * (messages-panel.ts). It owns what they share: the viewed leaf and target, the path, the watch
 * on a file that can grow (started on open where the store can change: the viewed path grows as
 * the file does) and Follow (keep to the file's newest leaf, whichever branch it is on). The
 * state that a link carries (leaf, target, filter, search) is reported through `onState` and
 * restored from `ViewState`.
 *
 * `start()`, once the view is in the document, draws it: the messages first, the tree after
 * that frame is painted (laying out a large tree takes a while, and the messages are what the
 * reader came for).
 *
 * A preview (`reading` given) shows the end of a large file while the app reads the rest: the
 * messages of its leaf as far back as that end holds them, the header without the figures (they
 * need the whole file), and what `reading` says (how far the reading is) in the tree's place.
 */
import type { SessionEntry } from "../../../src/format/types.js";
import { followSession, type LoadedSession, type SessionFollower } from "../data/load-session.js";
import type { EntryFilter } from "../model/filters.js";
import { PathSet } from "../model/tree-layout.js";
import { afterNextPaint, el, type Child } from "../render/dom.js";
import { MessagesPanel } from "./messages-panel.js";
import { SessionHeader, type HeaderButton, type LiveState } from "./session-header.js";
import { TreePanel, type TreePosition } from "./tree-panel.js";

export interface ViewState {
  leafId: string | null;
  targetId: string | null;
  filter: EntryFilter;
  query: string;
}

export interface SessionAction extends HeaderButton {
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
  /** The store can change while the session is viewed: watch it, offer Follow. */
  followable: boolean;
  /** A preview of the file's end (see above): shown where the tree goes. */
  reading?: HTMLElement;
}

export class SessionView {
  readonly element: HTMLElement;
  readonly session: LoadedSession;
  readonly #options: SessionViewOptions;
  #leafId: string | null;
  #targetId: string | null;
  /** The viewed path, root → leaf, by entry number. */
  #path: number[] = [];
  #activePath = new PathSet(0, []);
  readonly #header: SessionHeader;
  readonly #tree: TreePanel | null;
  readonly #messages: MessagesPanel;
  #follower: SessionFollower | null = null;
  /** Follow: the view keeps to the file's newest leaf. */
  #following = false;
  #destroyed = false;

  constructor(options: SessionViewOptions) {
    this.#options = options;
    this.session = options.session;
    const model = this.session.model;
    const initial = options.initial ?? {};
    this.#leafId = initial.leafId && model.getEntry(initial.leafId) ? initial.leafId : model.fileLeafId;
    this.#targetId = initial.targetId && model.getEntry(initial.targetId) ? initial.targetId : null;

    this.#header = new SessionHeader({
      model,
      notices: options.notices ?? [],
      buttons: options.actions,
      followable: options.followable,
      partial: options.reading !== undefined,
      onButton: (id) => void options.actions.find((a) => a.id === id)?.run(this),
      onFollowSwitch: () => void this.setFollowing(!this.following),
      onOpenTree: () => this.element.classList.add("sidebar-open"),
    });
    this.#messages = new MessagesPanel({
      session: this.session,
      header: this.#header,
      onOpenEntry: (entryId) => this.openEntry(entryId),
      linkToEntry: (entryId) => options.linkTo({ ...this.state, targetId: entryId }),
      onReading: (entryId) => this.#tree?.showReading(entryId),
    });
    this.#header.render(this.#liveState());
    this.#setPath(this.#leafId);
    this.#tree = options.reading
      ? null
      : new TreePanel({
          model,
          filter: initial.filter ?? "default",
          query: initial.query ?? "",
          position: this.#position(),
          onOpenEntry: (entryId) => this.openEntry(entryId),
          onFilterOrSearch: () => this.#emit(),
          onClose: () => this.#closeSidebar(),
        });
    // On a narrow screen the sidebar lies over the messages: the shade behind it closes it.
    const overlay = el("div", { class: "sidebar-overlay", "data-action": "close-sidebar" });
    const content = el("div", { id: "content", class: "content" }, this.#messages.element, this.#messages.followBar);
    const sidebar = this.#tree?.element ?? el("aside", { id: "sidebar", class: "sidebar sidebar-reading" }, options.reading);
    this.element = el("div", { class: "session-view" }, overlay, sidebar, content);
    overlay.addEventListener("click", () => this.#closeSidebar());
  }

  /** Draws the view, which is in the document now: the messages, then, after that frame, the tree and the file's watch. */
  async start(): Promise<void> {
    this.#showPath();
    await afterNextPaint();
    if (this.#destroyed) return;
    this.#tree?.start();
    // Not before: over sessionkit serve a watch opens the port's WebSocket, which the first screen would wait behind.
    if (this.#options.followable && !this.#follower) void this.#watch();
  }

  get state(): ViewState {
    return { leafId: this.#leafId, targetId: this.#targetId, filter: this.#tree?.filter ?? "default", query: this.#tree?.query ?? "" };
  }

  /** Shows the path to the newest leaf under `entryId` and scrolls to that entry (pi's tree click). */
  /** A notice about the file that arrived after the first render (the session's secrets). */
  addNotice(notice: HTMLElement): void {
    this.#header.addNotice(notice);
  }

  openEntry(entryId: string): void {
    const model = this.session.model;
    if (!model.getEntry(entryId)) return;
    this.navigate(model.newestLeafUnder(entryId), entryId);
  }

  navigate(leafId: string | null, targetId: string | null): void {
    this.#leafId = leafId;
    this.#targetId = targetId;
    this.#showPath();
    this.#tree?.show(this.#position());
    this.#emit();
  }

  /** Back to the session's own leaf, search cleared (Esc). */
  reset(): void {
    this.#tree?.clearSearch();
    this.navigate(this.session.model.fileLeafId, null);
  }

  toggleThinking(): void {
    this.#messages.toggleThinking();
  }

  toggleOutputs(): void {
    this.#messages.toggleOutputs();
  }

  setFilter(filter: EntryFilter): void {
    this.#tree?.setFilter(filter);
  }

  /** The entries of the viewed branch, root → leaf (parsed for the caller, not kept). */
  branchEntries(): SessionEntry[] {
    const model = this.session.model;
    return this.#path.map((i) => model.peek(i));
  }

  /** The entry being read when the messages are scrolled up from their end (null at the end): a preview's reader keeps their place. */
  readingAwayFromEnd(): string | null {
    return this.#messages.readingAwayFromEnd();
  }

  /** Puts `entryId` at the top of the messages (a place kept from a preview). */
  scrollToEntry(entryId: string): void {
    this.#messages.scrollToEntry(entryId);
  }

  /** Scrolls the message list by one message (j/k) or one user turn ([ and ]). */
  step(direction: 1 | -1, turns: boolean): void {
    this.#messages.step(direction, turns);
  }

  focusTree(): void {
    this.#tree?.focus();
  }

  /** Follow on: to the file's newest leaf and its end, and there with every entry written; off: the view stays where it is. */
  async setFollowing(on: boolean): Promise<void> {
    if (on === this.#following) return;
    this.#following = on;
    if (on) {
      if (!this.#follower) await this.#watch();
      const leaf = this.session.model.fileLeafId;
      if (leaf !== this.#leafId || this.#targetId !== null) this.navigate(leaf, null);
      this.#messages.resumeFollowing();
    }
    this.#header.render(this.#liveState());
  }

  get following(): boolean {
    return this.#following;
  }

  async destroy(): Promise<void> {
    this.#destroyed = true;
    const follower = this.#follower;
    this.#follower = null;
    await follower?.stop();
    this.#tree?.destroy();
    this.#messages.destroy();
    this.element.remove();
  }

  /** Watches the file: what is appended joins the model, the tree and, when it continues the viewed path, the messages. */
  async #watch(): Promise<void> {
    const stopped = (message: string) => {
      const follower = this.#follower;
      this.#follower = null;
      this.#following = false;
      void follower?.stop();
      this.#messages.setLive(false);
      this.#messages.showFollowNotice(message);
      this.#header.render(this.#liveState());
    };
    const follower = await followSession(this.session, {
      onAppend: () => this.#onAppend(),
      onReplaced: () => stopped("The file was replaced: reopen the session to see it."),
      onError: (error) => stopped(`Following stopped: ${error instanceof Error ? error.message : String(error)}`),
    });
    if (this.#destroyed) {
      await follower.stop();
      return;
    }
    this.#follower = follower;
    this.#messages.setLive(true);
    this.#header.render(this.#liveState());
  }

  #liveState(): LiveState {
    return this.#following ? "following" : this.#follower ? "live" : "off";
  }

  #emit(): void {
    this.#options.onState(this.state);
  }

  #position(): TreePosition {
    return { activePath: this.#activePath, leafId: this.#leafId, targetId: this.#targetId };
  }

  #setPath(leafId: string | null): void {
    const model = this.session.model;
    this.#path = model.pathIndexes(leafId);
    this.#activePath = new PathSet(model.size, this.#path);
  }

  #showPath(): void {
    this.#setPath(this.#leafId);
    this.#messages.show(this.#path, this.#activePath, this.#targetId);
  }

  #onAppend(): void {
    const model = this.session.model;
    const previousLeaf = this.#leafId;
    const newLeaf = model.fileLeafId;
    // The viewed path grows when the new entries continue it; under Follow the view moves to the newest leaf wherever it is.
    const newLeafIndex = newLeaf === null ? undefined : model.indexOf(newLeaf);
    const previousIndex = previousLeaf === null ? undefined : model.indexOf(previousLeaf);
    const continues = newLeafIndex !== undefined && (previousLeaf === null || (previousIndex !== undefined && model.isOnPathTo(previousIndex, newLeafIndex)));
    if (continues) {
      this.#leafId = newLeaf;
      this.#setPath(newLeaf);
      this.#messages.entriesAppended(this.#path, this.#activePath);
      this.#emit();
    } else if (this.#following && newLeaf !== null) {
      this.navigate(newLeaf, null);
      this.#messages.resumeFollowing();
    }
    this.#header.render(this.#liveState());
    this.#tree?.entriesAppended(this.#position());
  }

  #closeSidebar(): void {
    this.element.classList.remove("sidebar-open");
  }
}
