/** The example's preload: the page gets `window.sessionkitStorage` (invoke + pushes), nothing else. */
import { contextBridge, ipcRenderer } from "electron";
import { exposeStorageBridge } from "sessionkit/adapters/electron/preload";

exposeStorageBridge(contextBridge, ipcRenderer);
