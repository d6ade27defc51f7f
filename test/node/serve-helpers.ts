/** Real `sessionkit serve` servers on free ports, and Node clients of them (the `ws` WebSocket). */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WebSocket } from "ws";
import { httpStorage, type HttpStorage } from "../../adapters/rpc/http.js";
import type { WebSocketLike } from "../../adapters/rpc/websocket.js";
import { startServe, type RunningServer, type ServeOptions } from "../../cli/serve/server.js";

export interface ServedStore {
  server: RunningServer;
  root: string;
  store: string;
  client(options?: { timeoutMs?: number; chunkBytes?: number }): HttpStorage;
  cleanup(): Promise<void>;
}

/** A temp dir served on 127.0.0.1 and a free port; every client made is closed by cleanup. */
export async function serveTempStore(options: Partial<ServeOptions> = {}): Promise<ServedStore> {
  const root = await mkdtemp(join(tmpdir(), "sessionkit-serve-"));
  const server = await startServe({ stores: [{ root }], port: 0, viewerDir: null, ...options });
  const store = server.stores[0]!.id;
  const clients: HttpStorage[] = [];
  return {
    server,
    root,
    store,
    client: (clientOptions) => {
      const client = httpStorage({ url: server.origin, token: server.token, store, WebSocket: WebSocket as unknown as new (url: string) => WebSocketLike, ...clientOptions });
      clients.push(client);
      return client;
    },
    cleanup: async () => {
      await Promise.all(clients.map((client) => client.close().catch(() => {})));
      await server.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}
