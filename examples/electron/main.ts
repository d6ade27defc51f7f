/** The example's main process: the sessions live in files under the app's data dir. */
import { app, BrowserWindow, ipcMain } from "electron";
import nodePath from "node:path";
import { fileURLToPath } from "node:url";
import { serveStorageOverIpc } from "sessionkit/adapters/electron/main";
import { nodeFsStorage } from "sessionkit/adapters/node-fs";

const here = nodePath.dirname(fileURLToPath(import.meta.url));

await app.whenReady();
const storage = nodeFsStorage({ root: nodePath.join(app.getPath("userData"), "sessions-store") });
let window: BrowserWindow | undefined;
serveStorageOverIpc(ipcMain, storage, {
  // Only this app's own window may reach the store.
  allow: (webContents) => webContents.id === window?.webContents.id,
  paths: ["sessions", "blobs"],
});
window = new BrowserWindow({
  width: 900,
  height: 700,
  webPreferences: { preload: nodePath.join(here, "preload.cjs"), contextIsolation: true, sandbox: true, nodeIntegration: false },
});
await window.loadFile(nodePath.join(here, "index.html"));
app.on("window-all-closed", () => {
  void storage.close().finally(() => app.quit());
});
