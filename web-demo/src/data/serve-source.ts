/**
 * The stores of `sessionkit serve`, when it served this page: `GET api/stores` answers with them
 * (asked by serve-boot.ts before this code loaded), checked here. One `httpStorage` per store,
 * with the token the page came with. The store of the session the address names answers the first
 * size and the first range the viewer reads from the bytes serve-boot.ts asked for at once,
 * instead of asking for them in turn once the app runs (the size over the port's WebSocket,
 * opened only then).
 */
import * as z from "zod/mini";
import { httpStorage, type ServedStore } from "../../../adapters/rpc/http.js";
import type { SessionInfo } from "../../../src/format/types.js";
import type { ByteRange, FileStat, StoragePort } from "../../../src/port.js";
import { searchWithIndex } from "./index-search.js";
import { TOKEN_KEY, type SessionPrefetch, type StoresAnswer } from "./serve-boot.js";
import { PortStoreSource, type StoreSearchHit, type StoreSearchOptions } from "./source.js";
import { afterNextPaint } from "../render/dom.js";

const servedStoresSchema = z.array(z.object({ id: z.string(), label: z.string(), readOnly: z.boolean(), agent: z.optional(z.string()), samples: z.optional(z.boolean()) }));

/** What `sessionkit serve` offers this page, and the token it took. */
export interface Served {
  stores: ServedStore[];
  token: string | undefined;
}

/**
 * The stores in a `sessionkit serve`'s answer to `GET api/stores` (serve-boot.ts), sent with
 * `token`; "token-needed" when it refused the token (or its lack of one); null when the answer is
 * not one.
 */
export function servedStores(answer: StoresAnswer, token: string | undefined): Served | "token-needed" | null {
  if (answer.status === 401) {
    sessionStorage.removeItem(TOKEN_KEY);
    dropTokenFromAddress();
    return "token-needed";
  }
  const parsed = servedStoresSchema.safeParse(answer.body);
  if (!answer.ok || !parsed.success) return null;
  if (token !== undefined) void afterNextPaint().then(() => keepToken(token));
  return { stores: parsed.data, token };
}

/**
 * The tab keeps the token (sessionStorage), and the address loses it: it stays out of links,
 * history and screenshots. Done after the first paint, as both wait on the browser process: a
 * page's first use of sessionStorage took 1–77 ms, and the address change 5–7 ms of the task that
 * renders the first entries.
 */
function keepToken(token: string): void {
  sessionStorage.setItem(TOKEN_KEY, token);
  dropTokenFromAddress();
}

/** This page's address without its `?token=`, when it has one. */
function dropTokenFromAddress(): void {
  const address = new URL(location.href);
  if (!address.searchParams.has("token")) return;
  address.searchParams.delete("token");
  history.replaceState(null, "", address);
}

/**
 * Every served store as one read-only (unless served with --write) port; sessions can be followed;
 * the server lists and searches them (it reads the files where they are). The store of
 * `prefetch` answers its first reads of that session from it.
 */
export function serveSource({ stores, token }: Served, origin: string = location.origin, prefetch: SessionPrefetch | null = null): PortStoreSource {
  return new PortStoreSource(
    "serve",
    stores.map((store) => {
      const storage = httpStorage({ url: origin, store: store.id, token });
      return {
        id: store.id,
        label: store.label,
        ...(store.agent === undefined ? {} : { agent: store.agent }),
        storage: prefetch?.store === store.id ? withPrefetch(storage, prefetch) : storage,
        writable: !store.readOnly,
        samples: store.samples === true,
        listSessions: () => listServedSessions(origin, store.id, token),
        searchSessions: (query: string, options: StoreSearchOptions) => searchServedSessions(origin, store.id, token, query, options),
      };
    }),
    true,
    searchWithIndex,
  );
}

/**
 * A store's sessions as its server lists them (`GET api/stores/<id>/sessions`, adapters/rpc/HTTP-API.md):
 * what SessionManager.listAll would give over the port, without fetching every session file.
 */
export async function listServedSessions(origin: string, store: string, token: string | undefined): Promise<SessionInfo[]> {
  const path = `/api/stores/${encodeURIComponent(store)}/sessions`;
  const response = await fetch(new URL(path, origin), { headers: token === undefined ? {} : { Authorization: `Bearer ${token}` }, cache: "no-store" });
  if (!response.ok) throw new Error(`GET ${path}: ${response.status} ${await response.text()}`);
  // JSON carries a Date as its ISO string, an invalid one as null.
  const listed = (await response.json()) as (Omit<SessionInfo, "created" | "modified"> & { created: string | null; modified: string | null })[];
  const date = (iso: string | null) => new Date(iso ?? NaN);
  return listed.map((info) => ({ ...info, created: date(info.created), modified: date(info.modified) }));
}

/**
 * A search across a store's sessions, run by its server (`GET api/stores/<id>/search`,
 * adapters/rpc/HTTP-API.md): NDJSON, progress lines while the server's index catches up, then the hits.
 */
export async function searchServedSessions(origin: string, store: string, token: string | undefined, query: string, options: StoreSearchOptions): Promise<StoreSearchHit[]> {
  const path = `/api/stores/${encodeURIComponent(store)}/search`;
  const params = new URLSearchParams({ q: query, sources: options.sources.join(","), limit: String(options.limit) });
  const response = await fetch(new URL(`${path}?${params.toString()}`, origin), { headers: token === undefined ? {} : { Authorization: `Bearer ${token}` }, cache: "no-store" });
  if (!response.ok || !response.body) throw new Error(`GET ${path}: ${response.status} ${await response.text()}`);
  const lines = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let pending = "";
  for (;;) {
    const { done, value } = await lines.read();
    pending += value ?? "";
    const complete = done ? pending : pending.slice(0, pending.lastIndexOf("\n") + 1);
    pending = pending.slice(complete.length);
    for (const line of complete.split("\n")) {
      if (line === "") continue;
      const message = JSON.parse(line) as { progress?: Parameters<NonNullable<StoreSearchOptions["onProgress"]>>[0]; hits?: StoreSearchHit[]; error?: string };
      if (message.hits) return message.hits;
      if (message.error !== undefined) throw new Error(`GET ${path}: ${message.error}`);
      if (message.progress) options.onProgress?.(message.progress);
    }
    if (done) throw new Error(`GET ${path}: the answer ended before its hits`);
  }
}

/** Prefetched bytes stand for the file only this long after they arrived (as adapters/rpc/http.ts's read-ahead). */
const PREFETCH_FRESH_MS = 2000;

/**
 * `storage` with the prefetched bytes standing in for the session's first reads: its first size
 * (from the bytes when they are the whole file, else from the prefetch's HEAD) and reads inside
 * them, until a read goes past them (the load went on) or reaches their end, or they are
 * PREFETCH_FRESH_MS old. Everything else, and everything after, is `storage`'s: the session opens
 * without waiting for the port's WebSocket.
 */
function withPrefetch(storage: StoragePort, prefetch: SessionPrefetch): StoragePort {
  let pending: SessionPrefetch["answer"] | null = prefetch.answer;
  let statTaken = false;
  const usable = async (path: string) => {
    if (path !== prefetch.path || pending === null) return null;
    const answer = await pending;
    if (answer === null || Date.now() - answer.at > PREFETCH_FRESH_MS) pending = null;
    return pending === null ? null : answer;
  };
  return {
    kind: storage.kind,
    async stat(path: string): Promise<FileStat | null> {
      const answer = statTaken ? null : await usable(path);
      if (!answer) return storage.stat(path);
      statTaken = true;
      return answer.whole ? { size: answer.bytes.length, mtimeMs: answer.mtimeMs } : ((await prefetch.stat) ?? storage.stat(path));
    },
    async read(path: string, range?: ByteRange): Promise<Uint8Array | null> {
      const answer = await usable(path);
      if (answer && range) {
        const end = range.length === undefined ? Infinity : range.offset + range.length;
        if (end <= answer.bytes.length || (answer.whole && range.offset <= answer.bytes.length)) {
          if (end >= answer.bytes.length) pending = null;
          return answer.bytes.slice(range.offset, Math.min(end, answer.bytes.length));
        }
      }
      pending = null;
      return storage.read(path, range);
    },
    list: (dir) => storage.list(dir),
    append: (path, data) => storage.append(path, data),
    write: (path, data) => storage.write(path, data),
    truncate: (path, size) => storage.truncate(path, size),
    remove: (path) => storage.remove(path),
    ...(storage.sync ? { sync: (path: string) => storage.sync!(path) } : {}),
    ...(storage.acquireLock ? { acquireLock: (key: string) => storage.acquireLock!(key) } : {}),
    ...(storage.watch ? { watch: (dir: string, onChange: (path: string) => void) => storage.watch!(dir, onChange) } : {}),
    ...(storage.close ? { close: () => storage.close!() } : {}),
  };
}
