/**
 * Search across sessions by reading each one: correct everywhere, linear in the stores' size, so
 * for the browser's own store and exported files. The search index of the "find any session
 * fast" issue (`searchSessions` in the core) replaces it where it exists: serve-source.ts.
 */
import type { SessionEntry } from "../../../src/index.js";
import { contentText, searchTokens, yieldToEventLoop } from "../model/filters.js";
import { loadSession } from "./load-session.js";
import type { ListedSession, SessionSearchHit, SessionSearchOptions, StoreSource } from "./source.js";

const SNIPPET_CHARS = 160;

/** The text of an entry a search across sessions looks at, and the role it shows. */
export function entrySearchText(entry: SessionEntry, includeToolOutput: boolean): { role: string; text: string } | null {
  switch (entry.type) {
    case "message": {
      const message = entry.message;
      if (typeof message !== "object" || message === null) return null;
      const role = String(message.role);
      if (role === "toolResult") return includeToolOutput ? { role, text: contentText(message.content, "\n") } : null;
      if (role === "bashExecution") return { role, text: `${String(message.command ?? "")}${includeToolOutput ? `\n${String(message.output ?? "")}` : ""}` };
      return { role, text: contentText(message.content, "\n") };
    }
    case "compaction":
    case "branch_summary":
      return { role: entry.type, text: String(entry.summary ?? "") };
    case "custom_message":
      return { role: String(entry.customType), text: contentText(entry.content, "\n") };
    default:
      return null;
  }
}

export function snippetAround(text: string, token: string): string {
  const at = text.toLowerCase().indexOf(token);
  const start = Math.max(0, at - SNIPPET_CHARS / 3);
  const cut = text.slice(start, start + SNIPPET_CHARS).replace(/\s+/g, " ").trim();
  return `${start > 0 ? "…" : ""}${cut}${start + SNIPPET_CHARS < text.length ? "…" : ""}`;
}

export async function searchByScanning(source: StoreSource, sessions: readonly ListedSession[], query: string, options: SessionSearchOptions): Promise<SessionSearchHit[]> {
  const tokens = searchTokens(query);
  const limit = options.limit ?? 200;
  const hits: SessionSearchHit[] = [];
  if (tokens.length === 0) return hits;
  for (const info of sessions) {
    const store = source.stores.find((s) => s.id === info.storeId);
    if (!store) continue;
    const { model } = await loadSession(store.storage, info.path);
    for (const entry of model.entries) {
      const found = entrySearchText(entry, options.includeToolOutput ?? false);
      if (!found) continue;
      const lower = found.text.toLowerCase();
      if (tokens.every((t) => lower.includes(t))) {
        hits.push({ storeId: info.storeId, path: info.path, entryId: entry.id, role: found.role, snippet: snippetAround(found.text, tokens[0]!) });
        if (hits.length >= limit) return hits;
      }
    }
    await yieldToEventLoop();
    if (options.isCurrent && !options.isCurrent()) return hits;
  }
  return hits;
}
