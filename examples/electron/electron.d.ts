/**
 * The few parts of the `electron` module this example uses, so that `npm run typecheck` checks the
 * example here, where the electron package cannot be installed (it downloads its binary from
 * outside the npm registry). Delete this file once `electron` is installed: its own types replace it.
 */
declare module "electron" {
  import type { ContextBridgeLike, IpcMainLike, IpcRendererLike, WebContentsLike } from "../../adapters/electron/types.js";
  export const ipcMain: IpcMainLike;
  export const ipcRenderer: IpcRendererLike;
  export const contextBridge: ContextBridgeLike;
  export const app: { whenReady(): Promise<void>; getPath(name: "userData"): string; on(event: "window-all-closed", listener: () => void): void; quit(): void };
  export class BrowserWindow {
    constructor(options: { width: number; height: number; webPreferences: { preload: string; contextIsolation: boolean; sandbox: boolean; nodeIntegration: boolean } });
    loadFile(file: string): Promise<void>;
    readonly webContents: WebContentsLike;
  }
}
