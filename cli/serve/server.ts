/**
 * `sessionkit serve`'s stores and viewer, wired to the HTTP server of adapters/server (the server
 * half of adapters/rpc/HTTP-API.md): a store directory is served through node-fs, its
 * `.sessionkit/` mounted from the user's cache directory when given (and kept by the server
 * itself when read-only: cache-keeper.ts), with the viewer's pages under their Content Security
 * Policy.
 */
import { readFile, realpath } from "node:fs/promises";
import nodePath from "node:path";
import { nodeFsStorage } from "../../adapters/node-fs/index.js";
import { readOnlyStorage } from "../../adapters/read-only.js";
import { HttpError } from "../../adapters/server/http.js";
import type { StoreSearch } from "../../adapters/server/search-route.js";
import { startServer, type RunningServer, type ServerOptions, type ServerStore } from "../../adapters/server/server.js";
import type { StoragePort } from "../../src/port.js";
import { searchSessions } from "../../src/search/search.js";
import { SEARCH_SOURCES, type SearchSource } from "../../src/search/text.js";
import { listAllSessions } from "../../src/session/listing.js";
import { appCspHeader } from "../../web-demo/app-csp.js";
import { KIT_DIR } from "../store-cache.js";
import { StoreDirectory } from "../store-port.js";
import { keepCaches, type CacheKeeper } from "./cache-keeper.js";
import { isSampleStore } from "./sample-store.js";

export type { RunningServer } from "../../adapters/server/server.js";

export type StoreConfig = (
  | {
      /** The directory holding sessions/ and blobs/. */
      root: string;
    }
  | {
      /** A store opened by the caller (a database); the server closes it when it closes. */
      storage: StoragePort & { close(): Promise<void> };
      /** How the store is named (a URL without its password): its id derives from it. */
      root: string;
    }
) & {
  /** What the page shows for it; default the root. */
  label?: string;
  /** The agent whose store it is ("pi", "omp", …), when known. */
  agent?: string;
  /**
   * Where the store's `.sessionkit/` (listing catalog, search index) lives: a cache directory of
   * the user's, mounted over the store, so the caches never go into the agent's folder. On a
   * read-only server the server keeps them there itself. Default: inside the store (and no
   * caches kept on a read-only server).
   */
  cacheDir?: string;
};

export interface ServeOptions extends Omit<ServerOptions, "stores" | "viewer"> {
  stores: StoreConfig[];
  /** The viewer's built files; null serves none. */
  viewerDir?: string | null;
  /** On a read-only server, the most bytes the server keeps in each store's `.sessionkit/` (its caches). Default 1 GiB. */
  maxCacheBytes?: number;
}

const DEFAULT_MAX_CACHE_BYTES = 1 << 30;

export async function startServe(options: ServeOptions): Promise<RunningServer> {
  const { stores, viewerDir, maxCacheBytes, ...rest } = options;
  const served: ServerStore[] = [];
  const keepers: CacheKeeper[] = [];
  for (const config of stores) {
    const root = "storage" in config ? config.root : nodePath.resolve(config.root);
    const { storage, hostPaths } = "storage" in config ? { storage: config.storage, hostPaths: {} } : await directoryStore(root, config.cacheDir);
    // Clients of a read-only store write nothing; the server keeps the kit's caches where they are
    // not in an agent's folder: mounted from the user's cache dir, or a database's own.
    const keeper = !rest.write && (config.cacheDir !== undefined || "storage" in config) ? keepCaches(storage, { maxBytes: maxCacheBytes ?? DEFAULT_MAX_CACHE_BYTES }) : undefined;
    if (keeper) keepers.push(keeper);
    const samples = !("storage" in config) && (await isSampleStore(root));
    // The server lists and searches the sessions where their files are (GET …/sessions, …/search):
    // a page would fetch every file. Its caches go where the keeper keeps them, or nowhere.
    const own = keeper?.own ?? (rest.write ? storage : readOnlyStorage(storage));
    const listSessions = keeper?.listSessions ?? (() => listAllSessions(own));
    served.push({ root, storage: keeper?.served ?? storage, label: config.label, agent: config.agent, samples, hostPaths, listSessions, searchSessions: searcher(own) });
  }
  const viewer = viewerDir ? nodePath.resolve(viewerDir) : null;
  const server = await startServer({ ...rest, stores: served, viewer: viewer === null ? null : { dir: viewer, contentSecurityPolicy: await viewerPolicy(viewer) } });
  const closeServer = server.close;
  return Object.assign(server, {
    close: async () => {
      await Promise.all(keepers.map((keeper) => keeper.close()));
      await closeServer();
    },
  });
}

/** The core's search over `storage`, for GET …/search: its index kept in the store's `.sessionkit/` where it may be written. */
function searcher(storage: StoragePort): StoreSearch {
  return ({ query, sources, limit }, onProgress) => {
    const unknown = sources.find((source) => !SEARCH_SOURCES.includes(source as SearchSource));
    if (unknown !== undefined) throw new HttpError(400, `sources: unknown source ${JSON.stringify(unknown)} (known: ${SEARCH_SOURCES.join(", ")})`);
    return searchSessions(storage, query, { sources: sources as SearchSource[], limit, onProgress });
  };
}

/**
 * The policy header of the viewer's pages: its index.html's inline scripts (its boot script) allowed
 * by their hash, as in the page's meta tag. Read once: a page rebuilt while the server runs has
 * its boot script refused and asks from its module instead (web-demo/src/data/serve-boot.ts).
 */
async function viewerPolicy(dir: string): Promise<string> {
  return appCspHeader(await readFile(nodePath.join(dir, "index.html"), "utf8").catch(() => ""));
}

/**
 * A store directory's port (its folders kept elsewhere through links mounted from where they are:
 * store-port.ts) with `.sessionkit/` from `cacheDir` when given, and the host directories its
 * error messages may name.
 */
async function directoryStore(root: string, cacheDir: string | undefined): Promise<{ storage: StoragePort; hostPaths: Record<string, string> }> {
  const directory = await StoreDirectory.find(root);
  const storage = directory.open(cacheDir === undefined ? {} : { [KIT_DIR]: nodeFsStorage({ root: cacheDir }) });
  const given = await hostPathsOf({ [root]: "", ...(cacheDir === undefined ? {} : { [nodePath.resolve(cacheDir)]: KIT_DIR }) });
  return { storage, hostPaths: { ...directory.hostPaths(), ...given } };
}

/** The directories as given and as the file system resolves them (error messages may name either). */
async function hostPathsOf(dirs: Record<string, string>): Promise<Record<string, string>> {
  const all = { ...dirs };
  for (const [dir, storagePath] of Object.entries(dirs)) all[await realpath(dir).catch(() => dir)] = storagePath;
  return all;
}
