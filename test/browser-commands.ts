/**
 * vitest browser commands: code the Chromium tests run in the Node process (real servers, child
 * processes, Playwright's page). Registered in vitest.config.ts; typed for the page below.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { BrowserCommand } from "vitest/node";
import { serveStorageOverIpc } from "../adapters/electron/main.js";
import type { IpcMainInvokeEventLike, WebContentsLike } from "../adapters/electron/types.js";
import { memoryStorage } from "../adapters/memory/index.js";
import { startServe, type RunningServer } from "../cli/serve/server.js";

const servers = new Map<string, { server: RunningServer; root: string }>();
const writers = new Map<number, { child: ChildProcess; lines: string[]; exited: Promise<void> }>();

function pageOrigin(context: { page: { url(): string } }): string {
  return new URL(context.page.url()).origin;
}

/** Starts `sessionkit serve` on a fresh temp dir; the test page's origin may call it. */
const startServeCommand: BrowserCommand<[options?: { write?: boolean }]> = async (context, options) => {
  const root = await mkdtemp(join(tmpdir(), "sessionkit-browser-serve-"));
  const server = await startServe({ stores: [{ root }], port: 0, viewerDir: null, write: options?.write ?? false, allowOrigins: [pageOrigin(context as never)] });
  servers.set(server.origin, { server, root });
  return { origin: server.origin, token: server.token, store: server.stores[0]!.id, root };
};

const stopServeCommand: BrowserCommand<[origin: string]> = async (_context, origin) => {
  const entry = servers.get(origin);
  servers.delete(origin);
  await entry?.server.close();
  if (entry) await rm(entry.root, { recursive: true, force: true });
};

/**
 * A child process appending to a session through node-fs (test/node/fixtures/fs-writer.ts). It
 * prefills, flushes, prints the path and waits for `continueWriter`; then appends with a flush
 * each, printing each flush's id and time.
 */
const startWriterCommand: BrowserCommand<[root: string, prefillBytes: number, appends: number, everyMs: number]> = async (_context, root, prefillBytes, appends, everyMs) => {
  const child = spawn(process.execPath, ["--import", "tsx", "test/node/fixtures/fs-writer.ts", root, String(prefillBytes), String(appends), String(everyMs)], { stdio: ["pipe", "pipe", "inherit"] });
  const lines: string[] = [];
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const first = new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on("line", (line) => {
      lines.push(line);
      if (lines.length === 1) resolve(line);
    });
    child.once("exit", (code) => reject(new Error(`the writer exited with ${code}`)));
  });
  writers.set(child.pid!, { child, lines, exited });
  return { pid: child.pid!, ...(JSON.parse(await first) as { path: string; bytes: number }) };
};

const continueWriterCommand: BrowserCommand<[pid: number]> = async (_context, pid) => {
  writers.get(pid)?.child.stdin!.write("go\n");
};

/** Waits for the writer to finish; returns what it printed after the first line. */
const finishWriterCommand: BrowserCommand<[pid: number]> = async (_context, pid) => {
  const writer = writers.get(pid)!;
  await writer.exited;
  writers.delete(pid);
  return writer.lines.slice(1).map((line) => JSON.parse(line) as { id: string; flushedAt: number; size: number });
};

/**
 * Electron's main process in this Node process: serveStorageOverIpc over a memory store per call,
 * reached from the page through Playwright's exposeBinding (`window.sessionkitInvoke(store,
 * envelope)`) as a renderer's invoke reaches ipcMain.handle. Returns the new store's number.
 */
type IpcHandler = (event: IpcMainInvokeEventLike, ...args: unknown[]) => Promise<unknown>;
const bridgeStores: IpcHandler[] = [];
let bindingExposed: Promise<void> | undefined;
const newBridgeStoreCommand: BrowserCommand<[]> = async (context) => {
  const webContents: WebContentsLike = { id: 1, send: () => {}, isDestroyed: () => false, on: () => {}, off: () => {} };
  type Binding = (source: { frame: { url(): string } }, ...args: unknown[]) => unknown;
  const { page } = context as unknown as { page: { url(): string; exposeBinding(name: string, fn: Binding): Promise<void> } };
  // The sending frame as Electron reports it, its URL the page's own in Chromium.
  bindingExposed ??= page.exposeBinding("sessionkitInvoke", (source, store, envelope) => bridgeStores[store as number]!({ sender: webContents, senderFrame: { url: source.frame.url(), parent: null } }, envelope));
  await bindingExposed;
  let handler: IpcHandler | undefined;
  const ipcMain = { handle: (_channel: string, listener: IpcHandler) => void (handler = listener), removeHandler: () => {} };
  // The session suite uses the whole store (sessions, blobs, the listing catalog), as an app may choose.
  serveStorageOverIpc(ipcMain, memoryStorage(), { allow: ({ url }) => new URL(url).origin === new URL(page.url()).origin, readable: [""], writable: [""] });
  bridgeStores.push(handler!);
  return bridgeStores.length - 1;
};

export const browserCommands = {
  startServe: startServeCommand,
  stopServe: stopServeCommand,
  startWriter: startWriterCommand,
  continueWriter: continueWriterCommand,
  finishWriter: finishWriterCommand,
  newBridgeStore: newBridgeStoreCommand,
};

declare module "vitest/browser" {
  interface BrowserCommands {
    startServe(options?: { write?: boolean }): Promise<{ origin: string; token: string; store: string; root: string }>;
    stopServe(origin: string): Promise<void>;
    startWriter(root: string, prefillBytes: number, appends: number, everyMs: number): Promise<{ pid: number; path: string; bytes: number }>;
    continueWriter(pid: number): Promise<void>;
    finishWriter(pid: number): Promise<{ id: string; flushedAt: number; size: number }[]>;
    newBridgeStore(): Promise<number>;
  }
}
