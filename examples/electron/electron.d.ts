/**
 * The few parts of the `electron` module this example uses, so that `npm run typecheck` checks the
 * example here, where the electron package cannot be installed (it downloads its binary from
 * outside the npm registry). Each is the structural type sessionkit's bridge accepts. Delete this
 * file once `electron` is installed: its own types replace it.
 */
declare module "electron" {
  import type { serveStorageOverIpc } from "sessionkit/adapters/electron/main";
  import type { exposeStorageBridge } from "sessionkit/adapters/electron/preload";
  export const ipcMain: Parameters<typeof serveStorageOverIpc>[0];
  export const ipcRenderer: Parameters<typeof exposeStorageBridge>[1];
  export const contextBridge: Parameters<typeof exposeStorageBridge>[0];
  export const app: { whenReady(): Promise<void>; getPath(name: "userData"): string; on(event: "window-all-closed", listener: () => void): void; quit(): void };
  export class BrowserWindow {
    constructor(options: { width: number; height: number; webPreferences: { preload: string; contextIsolation: boolean; sandbox: boolean; nodeIntegration: boolean } });
    loadFile(file: string): Promise<void>;
  }
}
