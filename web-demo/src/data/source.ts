/**
 * Where the viewer's sessions come from: one or more stores, each a StoragePort. The static build
 * keeps one store in the browser (IndexedDB or OPFS); `sessionkit serve` offers the user's agent
 * stores over HTTP (wired by serve-source.ts once the remote issue lands); an exported HTML file
 * holds one session in memory. The app only talks to this interface.
 */
import { SessionManager, type SessionInfo, type StoragePort } from "../../../src/index.js";
import { searchByScanning } from "./scan-search.js";

export interface ViewerStore {
  /** Stable within the source: part of links. */
  id: string;
  label: string;
  /** The agent whose store this is (pi, oh-my-pi, …), when known. */
  agent?: string;
  storage: StoragePort;
  /** Import and delete are offered only for a writable store. */
  writable: boolean;
}

export interface ListedSession extends SessionInfo {
  storeId: string;
}

export interface SessionSearchHit {
  storeId: string;
  path: string;
  entryId: string;
  /** The matching text, cut around the first match. */
  snippet: string;
  role: string;
}

export interface SessionSearchOptions {
  /** Tool output is most of the text: left out unless asked for. */
  includeToolOutput?: boolean;
  limit?: number;
  isCurrent?: () => boolean;
}

export interface StoreSource {
  readonly kind: "static" | "serve" | "embedded";
  readonly stores: readonly ViewerStore[];
  listSessions(): Promise<ListedSession[]>;
  searchSessions(query: string, options?: SessionSearchOptions): Promise<SessionSearchHit[]>;
  /** Sessions may change while viewed (another tab, an agent writing): offer following. */
  readonly live: boolean;
  close(): Promise<void>;
}

/** Search across a source's sessions: an index where there is one (the core's searchSessions), else scan-search.ts. */
export type SessionSearch = (source: StoreSource, sessions: readonly ListedSession[], query: string, options: SessionSearchOptions) => Promise<SessionSearchHit[]>;

/**
 * A source over stores given as ports: the browser's store (main.ts), an exported file's
 * in-memory store (export-main.ts), and for `sessionkit serve` one read-only http port per agent
 * store with `live` set (following uses the ports' watch). Listing is SessionManager.listAll per
 * store; search is `search` (scanning by default).
 */
export class PortStoreSource implements StoreSource {
  readonly kind;
  readonly stores: readonly ViewerStore[];
  readonly live: boolean;
  readonly #search: SessionSearch;

  constructor(kind: StoreSource["kind"], stores: readonly ViewerStore[], live: boolean, search: SessionSearch = searchByScanning) {
    this.kind = kind;
    this.stores = stores;
    this.live = live;
    this.#search = search;
  }

  async listSessions(): Promise<ListedSession[]> {
    const lists = await Promise.all(this.stores.map(async (store) => (await SessionManager.listAll(store.storage)).map((info) => ({ ...info, storeId: store.id }))));
    return lists.flat().sort((a, b) => b.modified.getTime() - a.modified.getTime());
  }

  async searchSessions(query: string, options: SessionSearchOptions = {}): Promise<SessionSearchHit[]> {
    return this.#search(this, await this.listSessions(), query, options);
  }

  store(id: string): ViewerStore | undefined {
    return this.stores.find((s) => s.id === id);
  }

  async close(): Promise<void> {
    await Promise.all(this.stores.map((s) => s.storage.close?.().catch(() => {})));
  }
}
