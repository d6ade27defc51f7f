/** The example's preload: the page gets `window.sessionkitStorage` (invoke + pushes), nothing else. */
import { contextBridge, ipcRenderer } from "electron";
import { exposeStorageBridge } from "../../adapters/electron/preload.js";

exposeStorageBridge(contextBridge, ipcRenderer);
