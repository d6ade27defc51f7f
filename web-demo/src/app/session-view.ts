/**
 * The view of one session, composed of its panels: the tree sidebar (tree-panel.ts), the header
 * (session-header.ts) and the messages of the root → leaf path with the follow bar
 * (messages-panel.ts). It owns what they share: the viewed leaf and target, the path, following.
 * The state that a link carries (leaf, target, filter, search) is reported through `onState` and
 * restored from `ViewState`.
 */
import type { SessionEntry } from "../../../src/format/types.js";
import { followSession, type LoadedSession, type SessionFollower } from "../data/load-session.js";
import type { EntryFilter } from "../model/filters.js";
import { el, type Child } from "../render/dom.js";
import { MessagesPanel } from "./messages-panel.js";
import { SessionHeader, type HeaderButton } from "./session-header.js";
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
  /** Offer following (the store can change while it is viewed). */
  followable: boolean;
}

export class SessionView {
  readonly element: HTMLElement;
  readonly session: LoadedSession;
  readonly #options: SessionViewOptions;
  #leafId: string | null;
  #targetId: string | null;
  #path: SessionEntry[] = [];
  #activePath = new Set<number>();
  readonly #header: SessionHeader;
  readonly #tree: TreePanel;
  readonly #messages: MessagesPanel;
  #follower: SessionFollower | null = null;

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
      onButton: (id) => void options.actions.find((a) => a.id === id)?.run(this),
      onFollowSwitch: () => void this.setFollowing(!this.following),
    });
    this.#messages = new MessagesPanel({
      session: this.session,
      onOpenEntry: (entryId) => this.openEntry(entryId),
      linkToEntry: (entryId) => options.linkTo({ ...this.state, targetId: entryId }),
    });
    this.#header.render(false);
    this.#showPath();
    this.#tree = new TreePanel({
      model,
      filter: initial.filter ?? "default",
      query: initial.query ?? "",
      position: this.#position(),
      onOpenEntry: (entryId) => this.openEntry(entryId),
      onFilterOrSearch: () => this.#emit(),
      onClose: () => this.#closeSidebar(),
    });
    const menu = el("button", { type: "button", id: "menu", class: "menu-button", "data-action": "open-sidebar", title: "Session tree" }, "☰");
    // On a narrow screen the sidebar lies over the messages: the shade behind it closes it.
    const overlay = el("div", { class: "sidebar-overlay", "data-action": "close-sidebar" });
    const content = el("main", { id: "content", class: "content" }, this.#header.element, this.#messages.element, this.#messages.followBar);
    this.element = el("div", { class: "session-view" }, menu, overlay, this.#tree.element, content);
    menu.addEventListener("click", () => this.element.classList.add("sidebar-open"));
    overlay.addEventListener("click", () => this.#closeSidebar());
  }

  get state(): ViewState {
    return { leafId: this.#leafId, targetId: this.#targetId, filter: this.#tree.filter, query: this.#tree.query };
  }

  /** Shows the path to the newest leaf under `entryId` and scrolls to that entry (pi's tree click). */
  openEntry(entryId: string): void {
    const model = this.session.model;
    if (!model.getEntry(entryId)) return;
    this.navigate(model.newestLeafUnder(entryId), entryId);
  }

  navigate(leafId: string | null, targetId: string | null): void {
    this.#leafId = leafId;
    this.#targetId = targetId;
    this.#showPath();
    this.#tree.show(this.#position());
    this.#emit();
  }

  /** Back to the session's own leaf, search cleared (Esc). */
  reset(): void {
    this.#tree.clearSearch();
    this.navigate(this.session.model.fileLeafId, null);
  }

  toggleThinking(): void {
    this.#messages.toggleThinking();
  }

  toggleOutputs(): void {
    this.#messages.toggleOutputs();
  }

  setFilter(filter: EntryFilter): void {
    this.#tree.setFilter(filter);
  }

  /** The entries of the viewed branch, root → leaf. */
  branchEntries(): SessionEntry[] {
    return this.#path.slice();
  }

  /** Scrolls the message list by one message (j/k) or one user turn ([ and ]). */
  step(direction: 1 | -1, turns: boolean): void {
    this.#messages.step(direction, turns);
  }

  focusTree(): void {
    this.#tree.focus();
  }

  async setFollowing(on: boolean): Promise<void> {
    if (on === (this.#follower !== null)) return;
    if (!on) {
      const follower = this.#follower;
      this.#follower = null;
      this.#messages.setFollowing(false);
      await follower?.stop();
    } else {
      this.#follower = await followSession(this.session, {
        onAppend: () => this.#onAppend(),
        onReplaced: () => this.#messages.showFollowNotice("The file was replaced: reopen the session to see it."),
        onError: (error) => this.#messages.showFollowNotice(`Following stopped: ${error instanceof Error ? error.message : String(error)}`),
      });
      this.#messages.setFollowing(true);
    }
    this.#header.render(this.following);
  }

  get following(): boolean {
    return this.#follower !== null;
  }

  async destroy(): Promise<void> {
    await this.setFollowing(false);
    this.#tree.destroy();
    this.#messages.destroy();
    this.element.remove();
  }

  #emit(): void {
    this.#options.onState(this.state);
  }

  #position(): TreePosition {
    return { activePath: this.#activePath, leafId: this.#leafId, targetId: this.#targetId };
  }

  #setPath(leafId: string | null): void {
    const model = this.session.model;
    const indexes = model.pathIndexes(leafId);
    this.#path = indexes.map((i) => model.entries[i]!);
    this.#activePath = new Set(indexes);
  }

  #showPath(): void {
    this.#setPath(this.#leafId);
    this.#messages.show(this.#path, this.#targetId);
  }

  #onAppend(): void {
    const model = this.session.model;
    const wasAtLeaf = this.#path.length === 0 || this.#leafId === this.#path[this.#path.length - 1]?.id;
    const previousLeaf = this.#leafId;
    // The viewed branch grows when the new entries continue it.
    const newLeaf = model.fileLeafId;
    const continues = wasAtLeaf && newLeaf !== null && (previousLeaf === null || model.pathTo(newLeaf).some((e) => e.id === previousLeaf));
    if (continues) {
      this.#leafId = newLeaf;
      this.#setPath(newLeaf);
      this.#messages.entriesAppended(this.#path);
      this.#emit();
    } else {
      this.#messages.entriesAppended(null);
    }
    this.#header.render(this.following);
    this.#tree.entriesAppended(this.#position());
  }

  #closeSidebar(): void {
    this.element.classList.remove("sidebar-open");
  }
}
