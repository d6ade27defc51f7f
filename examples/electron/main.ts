/** The example's main process: the sessions live in files under the app's data dir. */
import { app, BrowserWindow, ipcMain } from "electron";
import nodePath from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { serveStorageOverIpc } from "sessionkit/adapters/electron/main";
import { nodeFsStorage } from "sessionkit/adapters/node-fs";

const here = nodePath.dirname(fileURLToPath(import.meta.url));
const page = nodePath.join(here, "index.html");
const pageUrl = pathToFileURL(page);

/** This app's own page, whatever its #hash: the whole URL, parsed, equal to the page's (scheme, host and path). */
function isOwnPage(url: string): boolean {
  if (!URL.canParse(url)) return false;
  const parsed = new URL(url);
  parsed.hash = "";
  return parsed.href === pageUrl.href;
}

await app.whenReady();
const storage = nodeFsStorage({ root: nodePath.join(app.getPath("userData"), "sessions-store") });
serveStorageOverIpc(ipcMain, storage, {
  // Checked on every request: the app's page as a top-level frame; not an iframe in it, nor a
  // site the window navigates to.
  allow: ({ frame, url }) => frame.parent === null && isOwnPage(url),
  // Pages read sessions/ and blobs/ (the default) and write sessions/ only: the store's
  // auth.json and settings never reach a page.
  writable: ["sessions/"],
});
const window = new BrowserWindow({
  width: 900,
  height: 700,
  // The page gets no Node and no ipcRenderer: only what the preload exposes.
  webPreferences: { preload: nodePath.join(here, "preload.cjs"), contextIsolation: true, sandbox: true, nodeIntegration: false },
});
await window.loadFile(page);
app.on("window-all-closed", () => {
  void storage.close().finally(() => app.quit());
});
