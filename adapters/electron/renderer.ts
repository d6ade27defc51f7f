/**
 * Electron renderer: a StoragePort over the bridge the preload exposed (`exposeStorageBridge`),
 * served by `serveStorageOverIpc` in main. Each call of `electronStorage()` is a client of its own,
 * with an id main makes on its first call; close the port when done (a page holds a bounded number).
 *
 * @module sessionkit/adapters/electron/renderer
 */
import { StorageError } from "../../src/port.js";
import { rpcClientStorage, type RpcStorage } from "../rpc/client.js";
import { DEFAULT_BRIDGE_KEY, type BridgeOpened, type StorageBridge } from "./types.js";

/** Options of {@link electronStorage}; `key` must match the preload's. */
export interface ElectronStorageOptions {
  /** The key the preload used; default "sessionkitStorage". */
  key?: string;
  /** The bridge itself, instead of looking it up on `globalThis` under `key`. */
  bridge?: StorageBridge;
  /** How long a call waits for main; default 30 s. */
  timeoutMs?: number;
  /** Most payload bytes per ipc message; default 1 MiB. */
  chunkBytes?: number;
}

/** The renderer's port: every StoragePort method, each one a call to main. */
export type ElectronStorage = RpcStorage;

/**
 * A StoragePort for a page of an Electron app, over the bridge the preload exposed: each call runs
 * on the port main serves (`serveStorageOverIpc`). Each call of this function is a client of its own.
 *
 * @throws StorageError "unsupported" when there is no bridge at `window[key]`
 */
export function electronStorage(options: ElectronStorageOptions = {}): ElectronStorage {
  const key = options.key ?? DEFAULT_BRIDGE_KEY;
  const bridge = options.bridge ?? ((globalThis as Record<string, unknown>)[key] as StorageBridge | undefined);
  if (!bridge || typeof bridge.invoke !== "function") {
    throw new StorageError("unsupported", `no storage bridge at window.${key}: call exposeStorageBridge in the preload script`);
  }
  /** The id main made for this port, asked for on its first call (and again after a refusal). */
  let client: string | undefined;
  let opening: Promise<string | object> | undefined;
  const open = () =>
    (opening ??= bridge.invoke({ open: true }).then(
      (answer) => {
        const id = (answer as Partial<BridgeOpened> | null)?.client;
        if (typeof id === "string") return (client = id);
        opening = undefined;
        return answer as object; // main's refusal ("forbidden", "limit"), an rpc error response
      },
      (error: unknown) => {
        opening = undefined;
        throw error;
      },
    ));
  return rpcClientStorage(
    async (message) => {
      const opened = await open();
      // Refused: this call fails with main's error.
      if (typeof opened !== "string") return { ...opened, id: message.id };
      return bridge.invoke({ client: opened, message });
    },
    {
      kind: "electron",
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      ...(options.chunkBytes === undefined ? {} : { chunkBytes: options.chunkBytes }),
      subscribe: (listener) =>
        bridge.onPush((push) => {
          if (push.client === client) listener(push.push);
        }),
    },
  );
}
