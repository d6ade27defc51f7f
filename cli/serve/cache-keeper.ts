/**
 * On a read-only server, `sessionkit serve` writes each store's caches (`.sessionkit/`: listing
 * catalogs, search indexes, what each session used) itself: its clients may write nothing, there either. When a client
 * reads a cache file (a listing reads its catalog, a search its index), the server brings that
 * cache up to date in the background, one refresh at a time, for the next client. The server's
 * own writes go only below `.sessionkit/`, and stop at a size cap.
 * Insights list their folder first (they read only the cache files there are), so listing it asks too.
 */
import type { SessionInfo } from "../../src/format/types.js";
import { StorageError, joinPath, type StoragePort } from "../../src/port.js";
import { readOnlyStorage } from "../../adapters/read-only.js";
import { CATALOG_DIR, listAllSessions } from "../../src/session/listing.js";
import { GROUP_SOURCES, SEARCH_DIR, type SourceGroup } from "../../src/search/search-index.js";
import { updateSearchIndex } from "../../src/search/search.js";
import { INSIGHTS_DIR, readSessionUsage } from "../../src/insights/store-insights.js";
import { KIT_DIR } from "../store-cache.js";

export interface CacheKeeper {
  /** The store as clients are served it: reading (or stat-ing) a cache file, or listing insights' folder, asks for that cache to be brought up to date. */
  readonly served: StoragePort;
  /** The store as the server itself reads it: read-only but for `.sessionkit/`, which it may fill up to its cap. */
  readonly own: StoragePort;
  /** The store's sessions, listed by the server (its catalog brought up to date on the way); one listing at a time. */
  listSessions(): Promise<SessionInfo[]>;
  /** Starts no more refreshes and waits for the one under way. */
  close(): Promise<void>;
}

/** A cache to bring up to date: the listing catalogs, what each session used (insights), or one search index. */
type Cache = "catalog" | "insights" | SourceGroup;

/** Reads of a cache come in bursts (a catalog per project directory): one refresh follows them. */
const REFRESH_DELAY_MS = 500;

/** Keeps the caches of `storage` (the whole store, its `.sessionkit/` included) for its clients, `.sessionkit/` within `maxBytes`. */
export function keepCaches(storage: StoragePort, options: { maxBytes: number }): CacheKeeper {
  const own = readOnlyStorage(cappedBelow(storage, KIT_DIR, options.maxBytes), { except: [KIT_DIR] });
  const wanted = new Set<Cache>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running: Promise<void> | undefined;
  let closed = false;
  let listing: Promise<SessionInfo[]> | undefined;
  // A page's listing and the catalog's refresh read the same files: one pass serves both.
  const listSessions = () => (listing ??= listAllSessions(own).finally(() => (listing = undefined)));

  const refresh = async (cache: Cache) => {
    // Best effort, as for any client: a cache that cannot be brought up to date is read as it is.
    if (cache === "catalog") await listSessions().catch(() => {});
    else if (cache === "insights") await listSessions().then((sessions) => readSessionUsage(own, sessions)).catch(() => {});
    else await updateSearchIndex(own, GROUP_SOURCES[cache]).catch(() => {});
  };
  const runWanted = () => {
    timer = undefined;
    running = (async () => {
      while (wanted.size > 0 && !closed) {
        const [cache] = wanted;
        wanted.delete(cache!);
        await refresh(cache!);
      }
    })().finally(() => (running = undefined));
  };
  const want = (path: string) => {
    const cache = cacheOf(path);
    if (cache === undefined || closed) return;
    wanted.add(cache);
    // A refresh under way takes it on when it is done.
    if (timer === undefined && running === undefined) timer = setTimeout(runWanted, REFRESH_DELAY_MS);
  };

  const served: StoragePort = {
    kind: storage.kind,
    read(path, range) {
      want(path);
      return storage.read(path, range);
    },
    stat(path) {
      want(path);
      return storage.stat(path);
    },
    list(dir) {
      want(dir);
      return storage.list(dir);
    },
    append: (path, data) => storage.append(path, data),
    write: (path, data) => storage.write(path, data),
    truncate: (path, size) => storage.truncate(path, size),
    remove: (path) => storage.remove(path),
    close: async () => storage.close?.(),
  };
  if (storage.sync) served.sync = storage.sync.bind(storage);
  if (storage.acquireLock) served.acquireLock = storage.acquireLock.bind(storage);
  if (storage.watch) served.watch = storage.watch.bind(storage);
  return {
    served,
    own,
    listSessions,
    async close() {
      closed = true;
      clearTimeout(timer);
      await running;
    },
  };
}

function cacheOf(path: string): Cache | undefined {
  if (path.startsWith(`${CATALOG_DIR}/`)) return "catalog";
  if (path === INSIGHTS_DIR || path.startsWith(`${INSIGHTS_DIR}/`)) return "insights";
  for (const group of Object.keys(GROUP_SOURCES) as SourceGroup[]) if (path === joinPath(SEARCH_DIR, `${group}.sqlite`)) return group;
  return undefined;
}

/** `port` whose writes and appends below `dir` fail with "quota" once the files there would hold more than `maxBytes`. */
function cappedBelow(port: StoragePort, dir: string, maxBytes: number): StoragePort {
  const sizeBelow = async (at: string): Promise<number> => {
    let total = 0;
    for (const entry of await port.list(at)) total += entry.kind === "dir" ? await sizeBelow(joinPath(at, entry.name)) : entry.size;
    return total;
  };
  const check = async (path: string, sizeAfter: (current: number) => number) => {
    if (!path.startsWith(`${dir}/`)) return;
    const current = (await port.stat(path))?.size ?? 0;
    const total = (await sizeBelow(dir)) - current + sizeAfter(current);
    if (total > maxBytes) throw new StorageError("quota", `${dir}/ would hold ${total} bytes, over its cap of ${maxBytes}`, { path });
  };
  return {
    kind: port.kind,
    read: (path, range) => port.read(path, range),
    stat: (path) => port.stat(path),
    list: (at) => port.list(at),
    async append(path, data) {
      await check(path, (current) => current + data.length);
      return port.append(path, data);
    },
    async write(path, data) {
      await check(path, () => data.length);
      return port.write(path, data);
    },
    truncate: (path, size) => port.truncate(path, size),
    remove: (path) => port.remove(path),
  };
}
