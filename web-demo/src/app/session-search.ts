/**
 * Search across sessions, in the list pane: the query box (Enter searches), "include tool
 * output", and the hits, best first, each opening its session at its entry. While an index catches
 * up its progress shows; the best HITS_SHOWN hits are listed, and the count says when more match.
 */
import type { ListedSession, SessionSearchHit, StoreSource } from "../data/source.js";
import { el, formatBytes, markedText, preview } from "../render/dom.js";

/** Hits shown, best first (one more is asked for, to tell whether more match). */
const HITS_SHOWN = 200;

export interface SessionSearchOptions {
  source: StoreSource;
  /** The listed sessions, to name each hit's session. */
  sessions: () => readonly ListedSession[];
  /** Runs a task as the app runs its others (one at a time, its failure shown). */
  run: (task: () => Promise<void>) => void;
  /** A hit was chosen. */
  onOpen: (storeId: string, path: string, entryId: string | null) => void;
}

export class SessionSearch {
  /** The query box and the tool-output choice, for the list's controls. */
  readonly controls: HTMLElement[];
  /** The hits (or the search's progress), above the list. */
  readonly results: HTMLElement;
  readonly #options: SessionSearchOptions;
  #seq = 0;

  constructor(options: SessionSearchOptions) {
    this.#options = options;
    const query = el("input", { type: "search", id: "global-search", placeholder: "Search all sessions… (Enter)", "aria-label": "Search all sessions", autocomplete: "off" });
    const includeTools = el("input", { type: "checkbox", id: "global-include-tools" });
    this.controls = [query, el("label", { class: "checkbox" }, includeTools, " include tool output")];
    this.results = el("div", { id: "global-results", class: "global-results", "aria-live": "polite" });
    query.addEventListener("keydown", (event) => {
      if (event.key === "Enter") options.run(() => this.#search(query.value, includeTools.checked));
    });
    this.results.addEventListener("click", (event) => {
      const hit = (event.target as Element).closest<HTMLElement>("[data-path]");
      if (hit) options.onOpen(hit.dataset.store!, hit.dataset.path!, hit.dataset.entry ?? null);
    });
  }

  async #search(query: string, includeToolOutput: boolean): Promise<void> {
    const seq = ++this.#seq;
    if (!query.trim()) {
      this.results.replaceChildren();
      return;
    }
    const status = el("p", { class: "list-count" }, "Searching…");
    this.results.replaceChildren(status);
    const found = await this.#options.source.searchSessions!(query, {
      includeToolOutput,
      limit: HITS_SHOWN + 1,
      isCurrent: () => seq === this.#seq,
      // The first search, and one after many changes, brings the index up to date first.
      onProgress: ({ filesDone, filesTotal, bytesDone, bytesTotal }) =>
        (status.textContent = `Indexing ${filesDone} / ${filesTotal} changed sessions (${formatBytes(bytesDone)} of ${formatBytes(bytesTotal)})…`),
    });
    if (seq !== this.#seq) return;
    const hits = found.slice(0, HITS_SHOWN);
    const count = found.length > HITS_SHOWN ? `The ${HITS_SHOWN} best hits (more match)` : `${hits.length} ${hits.length === 1 ? "hit" : "hits"}`;
    const sessions = new Map(this.#options.sessions().map((session) => [`${session.storeId}\n${session.path}`, session]));
    this.results.replaceChildren(
      el("p", { class: "list-count" }, `${count} for “${query}”`),
      el("ul", {}, ...hits.map((hit) => this.#renderHit(hit, sessions.get(`${hit.storeId}\n${hit.path}`)))),
    );
  }

  #renderHit(hit: SessionSearchHit, session: ListedSession | undefined): HTMLElement {
    const stores = this.#options.source.stores;
    return el(
      "li",
      { class: "search-hit" },
      el(
        "button",
        { type: "button", "data-store": hit.storeId, "data-path": hit.path, "data-entry": hit.entryId ?? undefined },
        el("span", { class: "session-title" }, session?.name ?? preview(session?.firstMessage ?? hit.path, 60)),
        el("span", { class: "hit-role" }, hit.role, stores.length > 1 ? ` · ${stores.find((s) => s.id === hit.storeId)?.label ?? hit.storeId}` : ""),
        el("span", { class: "hit-snippet" }, ...markedText(hit.snippet, hit.matches)),
      ),
    );
  }
}
