/**
 * `sessionkit serve`'s stores and viewer, wired to the HTTP server of adapters/server (the server
 * half of adapters/rpc/HTTP-API.md): a store directory is served through node-fs, its
 * `.sessionkit/` mounted from the user's cache directory when given, with the viewer's pages
 * under their Content Security Policy.
 */
import nodePath from "node:path";
import { mountedStorage } from "../../adapters/mounted.js";
import { nodeFsStorage } from "../../adapters/node-fs/index.js";
import { startServer, type RunningServer, type ServerOptions, type ServerStore } from "../../adapters/server/server.js";
import type { StoragePort } from "../../src/port.js";
import { APP_CSP_HEADER } from "../../web-demo/app-csp.js";
import { KIT_DIR } from "../store-cache.js";
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
   * the user's, mounted over the store, so clients keep their caches without writing into the
   * agent's folder, even when the store is served read-only. Default: inside the store.
   */
  cacheDir?: string;
};

export interface ServeOptions extends Omit<ServerOptions, "stores" | "viewer"> {
  stores: StoreConfig[];
  /** The viewer's built files; null serves none. */
  viewerDir?: string | null;
}

export async function startServe(options: ServeOptions): Promise<RunningServer> {
  const { stores, viewerDir, ...rest } = options;
  const served: ServerStore[] = [];
  for (const config of stores) {
    const root = "storage" in config ? config.root : nodePath.resolve(config.root);
    const base = "storage" in config ? config.storage : nodeFsStorage({ root });
    const storage = config.cacheDir === undefined ? base : mountedStorage(base, { [KIT_DIR]: nodeFsStorage({ root: config.cacheDir }) });
    // The kit's caches stay writable on a read-only store when they are not in an agent's folder:
    // mounted from the user's cache dir, or a database's own (it has no agent writing beside them).
    const writablePaths = config.cacheDir !== undefined || "storage" in config ? [KIT_DIR] : [];
    const samples = !("storage" in config) && (await isSampleStore(root));
    served.push({ root, storage, label: config.label, agent: config.agent, samples, writablePaths });
  }
  return startServer({ ...rest, stores: served, viewer: viewerDir ? { dir: nodePath.resolve(viewerDir), contentSecurityPolicy: APP_CSP_HEADER } : null });
}
