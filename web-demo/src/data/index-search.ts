/**
 * Search across sessions: each store's own search where it has one (`sessionkit serve` searches
 * where the files are), else the core's index (`searchSessions`: SQLite FTS5 kept in the store's
 * `.sessionkit/search/`, brought up to date from what changed since the last search). Each store
 * is searched in turn; hits are merged best first.
 */
import type { SearchSource } from "../../../src/search/text.js";
import type { SessionSearch, SessionSearchHit, StoreSearchOptions, ViewerStore } from "./source.js";

const DEFAULT_LIMIT = 200;

export const searchWithIndex: SessionSearch = async (source, query, options) => {
  const sources: SearchSource[] = options.includeToolOutput ? ["user", "assistant", "tool"] : ["user", "assistant"];
  const limit = options.limit ?? DEFAULT_LIMIT;
  const found: (SessionSearchHit & { score: number })[] = [];
  for (const store of source.stores) {
    if (options.isCurrent && !options.isCurrent()) break;
    const hits = await searchStore(store, query, { sources, limit, ...(options.onProgress ? { onProgress: options.onProgress } : {}) });
    for (const hit of hits) found.push({ storeId: store.id, path: hit.path, entryId: hit.entryId, role: hit.role, snippet: hit.snippet, matches: hit.matches, score: hit.score });
  }
  return found
    .sort((a, b) => b.score - a.score)
    .slice(0, limit)
    .map(({ score: _score, ...hit }) => hit);
};

async function searchStore(store: ViewerStore, query: string, options: StoreSearchOptions) {
  if (store.searchSessions) return store.searchSessions(query, options);
  // Loaded with the first search (SQLite's own chunk loads later still).
  const { searchSessions } = await import("../../../src/search/search.js");
  return searchSessions(store.storage, query, options);
}
