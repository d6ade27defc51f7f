/** The search and history commands, over the stores a command reads (see Run.stores). */
import nodePath from "node:path";
import v8 from "node:v8";
import { PromptHistory } from "../src/history/prompt-history.js";
import { searchSessions, type SearchHit } from "../src/search/search.js";
import { storeSessionDir } from "../src/session/paths.js";
import type { HistoryEntry } from "../src/history/history-db.js";
import type { AgentName } from "./command.js";
import type { HistoryArgs, SearchArgs } from "./commands/search.js";
import type { Run } from "./run.js";
import { searchProgress } from "./progress.js";
import { oneLine } from "./render.js";
import { storeFileOf, storeStorage } from "./store.js";
import { useSqliteCodeCache } from "./sqlite-code-cache.js";
import { cacheRoot } from "./cache-root.js";
import { openStorePort } from "./store-port.js";

const DEFAULT_LIMIT = 50;

/** A hit with an absolute `path`, and the agent and store it belongs to (as `ls` lists sessions). */
type FoundHit = SearchHit & { agent: AgentName; store: string };
/** A prompt with the agent and store it comes from. */
type FoundPrompt = HistoryEntry & { agent: AgentName; store: string };

/**
 * The command is one short process: V8's optimizing compiler would compile SQLite's hottest
 * WebAssembly (its bytecode interpreter above all) while the query runs, 70 to 130 ms of CPU that
 * one query never earns back. The baseline code alone makes a warm search ~25 % cheaper in CPU
 * and a first search that indexes everything ~7 % dearer (it is mostly JavaScript). Before SQLite
 * is loaded; `serve`, which lives long, keeps the optimizing compiler. SQLite's JavaScript comes
 * from a V8 code cache in the user's cache directory (sqlite-code-cache.ts); made under these flags,
 * which V8 checks it against.
 */
function startSqliteForOneQuery(run: Run<unknown>): void {
  v8.setFlagsFromString("--liftoff-only");
  useSqliteCodeCache(cacheRoot(run.io.env, run.home));
}

export async function searchCommand(run: Run<SearchArgs>): Promise<number> {
  startSqliteForOneQuery(run);
  const stores = await run.stores();
  const cwd = nodePath.resolve(run.io.cwd, run.args.cwd ?? ".");
  const limit = run.args.limit ?? DEFAULT_LIMIT;
  const found: FoundHit[] = [];
  for (const store of stores) {
    // Read through the cache: the index is written there, never into the agent's folder.
    const storage = await storeStorage(store, run.io.env, run.home);
    // Progress is for people: a --json reader on a pipe gets none.
    const progress = searchProgress(run.io.stderr, stores.length > 1 ? `sessionkit: search: ${store.label}` : "sessionkit: search", run.args.json && !run.io.stderr.isTTY);
    try {
      const scope = run.args.all ? {} : { dir: storeSessionDir(store.layout, cwd), ...(store.layout === "seed003" ? { cwd } : {}) };
      // One more than shown: whether more match.
      const hits = await searchSessions(storage, run.args.target, { ...scope, ...(run.args.sources ? { sources: run.args.sources } : {}), limit: limit + 1, onProgress: progress.onProgress });
      for (const hit of hits) found.push({ ...hit, path: storeFileOf(store, hit.path), agent: store.agent, store: store.root });
    } finally {
      progress.done();
      await storage.close();
    }
  }
  // Best first over all stores (scores of different indexes compare roughly: both are bm25).
  const hits = found.sort((a, b) => b.score - a.score).slice(0, limit);
  const more = found.length > limit;
  // Without --all only one project was searched: say which, and how to search them all.
  const scope = run.args.all ? [] : [`searched the sessions of ${cwd} only: --all searches every project`];
  run.print(hits, () => {
    if (hits.length === 0) return [`no messages match ${JSON.stringify(run.args.target)} in ${stores.map((store) => store.root).join(", ") || "any store"}`, ...scope];
    const lines: string[] = [];
    let session = "";
    for (const hit of hits) {
      if (hit.path !== session) {
        session = hit.path;
        lines.push(`${hit.path}  (${hit.agent} session ${hit.sessionId})`);
      }
      lines.push(`  ${(hit.entryId ?? "(v1)").padEnd(8)}  ${hit.source.padEnd(9)}  ${oneLine(hit.snippet, 160)}`);
    }
    const sessions = new Set(hits.map((hit) => hit.path)).size;
    lines.push(`${hits.length} hit${hits.length === 1 ? "" : "s"} in ${sessions} session${sessions === 1 ? "" : "s"}, best first${more ? " (more match: --limit to see more)" : ""}`, ...scope);
    return lines;
  });
  return 0;
}

export async function historyCommand(run: Run<HistoryArgs>): Promise<number> {
  startSqliteForOneQuery(run);
  const stores = await run.stores();
  const limit = run.args.limit ?? DEFAULT_LIMIT;
  const query = run.args.target.trim();
  const found: FoundPrompt[] = [];
  for (const store of stores) {
    // Only read: history files sit at the store's root, beside sessions/.
    const storage = store.database ? await store.database.open() : await openStorePort(store.root);
    try {
      const history = await PromptHistory.open(storage);
      if (history.importError) run.warn(`${storeFileOf(store, history.importError.message)} (its prompts are left out)`);
      for (const entry of query === "" ? history.recent(limit) : history.search(query, limit)) found.push({ ...entry, agent: store.agent, store: store.root });
    } finally {
      await storage.close();
    }
  }
  const entries = found.sort((a, b) => b.created_at - a.created_at || b.id - a.id).slice(0, limit);
  run.print(entries, () => {
    if (entries.length === 0) return [query === "" ? `no prompt history in ${stores.map((store) => store.root).join(", ") || "any store"}` : `no prompt matches ${JSON.stringify(query)}`];
    return entries.map((entry) => `${new Date(entry.created_at * 1000).toISOString().slice(0, 16).replace("T", " ")}  ${oneLine(entry.prompt, 100)}${entry.cwd ? `  (${entry.cwd})` : ""}`);
  });
  return 0;
}
