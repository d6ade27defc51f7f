/** Where the viewer keeps sessions: IndexedDB (default) or OPFS, remembered per browser. */
import { indexedDbStorage } from "../../adapters/indexeddb/index.js";
import { opfsStorage } from "../../adapters/opfs/index.js";
import type { StoragePort } from "../../src/port.js";

export type Backend = "indexeddb" | "opfs";

export const BACKENDS: readonly { value: Backend; label: string }[] = [
  { value: "indexeddb", label: "IndexedDB" },
  { value: "opfs", label: "OPFS" },
];

/** The IndexedDB database, and the OPFS directory, holding the viewer's store. */
const STORE_NAME = "sessionkit-viewer";

const CHOICE_KEY = "sessionkit-viewer.backend";

export type ViewerStorage = StoragePort & { close(): Promise<void> };

/** The viewer's store on `backend`; `onDataLoss` hears the browser's message when it replaced the IndexedDB store, found corrupt, with an empty one. */
export function openViewerStorage(backend: Backend, onDataLoss?: (message: string) => void): ViewerStorage {
  return backend === "opfs" ? opfsStorage({ root: STORE_NAME }) : indexedDbStorage({ dbName: STORE_NAME, ...(onDataLoss ? { onDataLoss: ({ message }) => onDataLoss(message) } : {}) });
}

export function loadBackendChoice(storage: Pick<Storage, "getItem"> = localStorage): Backend {
  const saved = storage.getItem(CHOICE_KEY);
  return saved === "opfs" ? "opfs" : "indexeddb";
}

export function saveBackendChoice(backend: Backend, storage: Pick<Storage, "setItem"> = localStorage): void {
  storage.setItem(CHOICE_KEY, backend);
}
