/**
 * Where the viewer's sessions come from: one or more stores, each a StoragePort. The static build
 * keeps one store in the browser (IndexedDB or OPFS); `sessionkit serve` offers the user's agent
 * stores over HTTP (serve-source.ts); an exported HTML file holds one session in memory. The app
 * only talks to this interface.
 */
import type { RefreshCounter as SearchIndexProgress } from "../../../src/search/search-index.js";
import type { SearchHit, SearchOptions } from "../../../src/search/search.js";
import type { SessionInfo } from "../../../src/format/types.js";
import type { StoragePort } from "../../../src/port.js";

export interface ViewerStore {
  /** Stable within the source: part of links. */
  id: string;
  label: string;
  /** The agent whose store this is (pi, oh-my-pi, …), when known. */
  agent?: string;
  storage: StoragePort;
  /** Import and delete are offered only for a writable store. */
  writable: boolean;
  /** Sample sessions (the repository's sample store), not the user's: listed after the user's, never opened first. */
  samples?: boolean;
  /**
   * The store's sessions listed where its files are (a server), instead of SessionManager.listAll
   * reading each file through `storage`.
   */
  listSessions?: () => Promise<SessionInfo[]>;
  /**
   * Search across the store's sessions where its files are (a server, with its own index), instead
   * of the core's searchSessions over `storage` (every changed file read into the page's index).
   */
  searchSessions?: (query: string, options: StoreSearchOptions) => Promise<StoreSearchHit[]>;
}

export type StoreSearchOptions = Required<Pick<SearchOptions, "sources" | "limit">> & Pick<SearchOptions, "onProgress">;
export type StoreSearchHit = Pick<SearchHit, "path" | "entryId" | "role" | "snippet" | "matches" | "score">;

export interface ListedSession extends SessionInfo {
  storeId: string;
}

export interface SessionSearchHit {
  storeId: string;
  path: string;
  /** The matching entry; null in a v1 file (its ids come with migration): the hit opens the session. */
  entryId: string | null;
  /** The matching text, cut around the first match. */
  snippet: string;
  /** Where the query matches in `snippet` (`[start, end)`, in order). */
  matches: [start: number, end: number][];
  role: string;
}

export interface SessionSearchOptions {
  /** Tool output is most of the text: left out unless asked for. */
  includeToolOutput?: boolean;
  limit?: number;
  /** False once a newer search started: the rest is not needed. */
  isCurrent?: () => boolean;
  /** How far bringing the index up to date has come (files and bytes that changed since the last search). */
  onProgress?: (progress: SearchIndexProgress) => void;
}

export interface StoreSource {
  readonly kind: "static" | "serve" | "embedded";
  readonly stores: readonly ViewerStore[];
  /** Every store's sessions: the user's newest first, then the samples (a group of their own) newest first. */
  listSessions(): Promise<ListedSession[]>;
  /** Absent where there is nothing to search across (an exported file's one session). */
  searchSessions?(query: string, options?: SessionSearchOptions): Promise<SessionSearchHit[]>;
  /** Sessions may change while viewed (another tab, an agent writing): offer following. */
  readonly live: boolean;
  close(): Promise<void>;
}

/** Search across a source's sessions (index-search.ts: the core's searchSessions on each store). */
export type SessionSearch = (source: StoreSource, query: string, options: SessionSearchOptions) => Promise<SessionSearchHit[]>;

/**
 * A source over stores given as ports: the browser's store (static-mode.ts), an exported file's
 * in-memory store (export-main.ts), and for `sessionkit serve` one http port per served store
 * (serve-source.ts), `live` where sessions can change while viewed (following uses the ports'
 * watch). Listing is each store's own `listSessions`, else SessionManager.listAll over its port;
 * search is `search`, when given.
 */
export class PortStoreSource implements StoreSource {
  readonly kind;
  readonly stores: readonly ViewerStore[];
  readonly live: boolean;
  readonly searchSessions?: (query: string, options?: SessionSearchOptions) => Promise<SessionSearchHit[]>;

  constructor(kind: StoreSource["kind"], stores: readonly ViewerStore[], live: boolean, search?: SessionSearch) {
    this.kind = kind;
    this.stores = stores;
    this.live = live;
    if (search) this.searchSessions = (query, options = {}) => search(this, query, options);
  }

  async listSessions(): Promise<ListedSession[]> {
    const listAll = async (store: ViewerStore) => {
      if (store.listSessions) return store.listSessions();
      // Loaded with the first list (after the first session is shown: app.ts), not with the page.
      const { SessionManager } = await import("../../../src/session/session-manager.js");
      return SessionManager.listAll(store.storage);
    };
    const lists = await Promise.all(this.stores.map(async (store) => (await listAll(store)).map((info) => ({ ...info, storeId: store.id }))));
    const samples = new Set(this.stores.filter((store) => store.samples).map((store) => store.id));
    const group = (session: ListedSession) => (samples.has(session.storeId) ? 1 : 0);
    return lists.flat().sort((a, b) => group(a) - group(b) || b.modified.getTime() - a.modified.getTime());
  }

  store(id: string): ViewerStore | undefined {
    return this.stores.find((s) => s.id === id);
  }

  async close(): Promise<void> {
    await Promise.all(this.stores.map((s) => s.storage.close?.().catch(() => {})));
  }
}
