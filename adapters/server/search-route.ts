/**
 * GET /api/stores/<id>/search (adapters/rpc/HTTP-API.md): search across a store's sessions, run
 * by the server where the files are. A page would otherwise read every changed session file over
 * HTTP and build the index itself, with SQLite compiled to WebAssembly. The answer is NDJSON: a
 * `{"progress": …}` line now and then while an index is brought up to date, then `{"hits": […]}`
 * (or `{"error": "…"}` when the search failed after the first line went out).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { HttpError, allowMethods, securityHeaders } from "./http.js";

/** What the route asks of a store's search. */
interface SearchRequest {
  query: string;
  /** Which texts to search ("user", "assistant", "tool", …): the search checks the names. */
  sources: readonly string[];
  limit: number;
}

/** A store's search: hits and progress JSON-serializable; an HttpError it throws is the answer's status. */
export type StoreSearch = (request: SearchRequest, onProgress: (progress: unknown) => void) => Promise<unknown>;

const MAX_QUERY_CHARS = 1000;
const MAX_SEARCH_LIMIT = 1000;
const DEFAULT_SEARCH_LIMIT = 200;
const DEFAULT_SOURCES = ["user", "assistant"];
/** Progress lines at most this often: a store of 10,000 changed files reports 10,000 times. */
const PROGRESS_EVERY_MS = 100;

/** `?q=…&sources=user,assistant,tool&limit=N` */
function searchRequestOf(params: URLSearchParams): SearchRequest {
  const query = params.get("q") ?? "";
  if (query.trim() === "") throw new HttpError(400, "q: a query is needed");
  if (query.length > MAX_QUERY_CHARS) throw new HttpError(400, `q: ${query.length} characters, over the ${MAX_QUERY_CHARS} allowed`);
  const sources = params.get("sources")?.split(",") ?? DEFAULT_SOURCES;
  const limitText = params.get("limit");
  const limit = limitText === null ? DEFAULT_SEARCH_LIMIT : Number(limitText);
  if (!/^\d+$/.test(limitText ?? "0") || limit < 1 || limit > MAX_SEARCH_LIMIT) throw new HttpError(400, `limit: ${JSON.stringify(limitText)} is not a whole number from 1 to ${MAX_SEARCH_LIMIT}`);
  return { query, sources, limit };
}

export async function answerSearch(request: IncomingMessage, response: ServerResponse, url: URL, search: StoreSearch | null): Promise<void> {
  allowMethods(request, ["GET"]);
  if (!search) throw new HttpError(404, "this server searches no sessions: read them through the rpc");
  const asked = searchRequestOf(url.searchParams);
  // The status goes out with the first line: a search refused before any progress (an unknown
  // source) still gets its own status.
  const line = (value: unknown) => {
    if (!response.headersSent) response.writeHead(200, { "Content-Type": "application/x-ndjson; charset=utf-8", ...securityHeaders });
    response.write(`${JSON.stringify(value)}\n`);
  };
  let lastProgress = -Infinity;
  let hits: unknown;
  try {
    hits = await search(asked, (progress) => {
      const now = performance.now();
      if (now - lastProgress < PROGRESS_EVERY_MS) return;
      lastProgress = now;
      line({ progress });
    });
  } catch (error) {
    if (!response.headersSent) throw error;
    line({ error: error instanceof Error ? error.message : String(error) });
    return void response.end();
  }
  line({ hits });
  response.end();
}
