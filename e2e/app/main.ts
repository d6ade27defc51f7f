/**
 * The e2e test page: exposes sessionkit's browser API as `window.sessionkit` for page.evaluate,
 * plus `held`, where objects that must outlive one evaluate call (open sessions, ports) wait.
 */
import { indexedDbStorage } from "../../adapters/indexeddb/index.js";
import { memoryStorage } from "../../adapters/memory/index.js";
import { opfsStorage } from "../../adapters/opfs/index.js";
import { httpStorage } from "../../adapters/rpc/http.js";
import { SessionManager, StorageError, isStorageError, type StoragePort } from "../../src/index.js";
import { assistantMsg, userMsg } from "../../test/shared/messages.js";

export type Backend = "indexeddb" | "opfs";

/** A port on `backend` whose data lives under `name` (a database, or an OPFS directory). */
function openStorage(backend: Backend, name: string): StoragePort {
  return backend === "indexeddb" ? indexedDbStorage({ dbName: name }) : opfsStorage({ root: name });
}

const sessionkit = {
  SessionManager,
  StorageError,
  isStorageError,
  indexedDbStorage,
  opfsStorage,
  memoryStorage,
  httpStorage,
  openStorage,
  userMsg,
  assistantMsg,
  held: new Map<string, unknown>(),
};

declare global {
  interface Window {
    sessionkit: typeof sessionkit;
  }
}

window.sessionkit = sessionkit;
document.querySelector("#status")!.textContent = "ready";
