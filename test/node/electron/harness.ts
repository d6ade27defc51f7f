/** Starts the main-process worker and connects renderers to it (see main-process.ts). */
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MessageChannel, Worker, type MessagePort } from "node:worker_threads";
import { build } from "esbuild";
import type { ServeOverIpcOptions } from "../../../adapters/electron/main.js";
import { REPO } from "../../shared/cli-runner.js";

/** The URL of the app's own page: the only one main allows (top-level frames only). */
export const APP_URL = "file:///opt/app/index.html";

/** serveStorageOverIpc's options that cross to the worker (`allow` is main-process.ts's own). */
export type MainOptions = Pick<ServeOverIpcOptions, "readable" | "writable" | "maxClientsPerPage">;

/** Where a new renderer's requests come from. */
export interface RendererOptions {
  /** The sending frame's URL (default APP_URL); null: a frame already gone (`senderFrame` null). */
  url?: string | null;
  /** The URL of the page that embeds the sending frame: it is an iframe. Default: a top-level frame. */
  parentUrl?: string;
}

/** What main reports of itself: its clients, its heap after a full collection, what `allow` last saw. */
export interface MainStats {
  clientCount: number;
  heapBytes: number;
  lastSender: { url: string; origin: string | undefined; topLevel: boolean; webContents: number } | undefined;
}

export interface ElectronMain {
  worker: Worker;
  root: string;
  /** A port for a new renderer (its webContents is made in main); post it to a worker or use it here. */
  newRenderer(options?: RendererOptions): Promise<{ port: MessagePort; webContents: number }>;
  stats(): Promise<MainStats>;
  stop(): Promise<void>;
}

let bundled: Promise<string> | undefined;
const bundleDir = mkdtemp(join(tmpdir(), "sessionkit-electron-"));

/** Bundles a harness entry point once per test file (worker threads run plain JavaScript). */
export async function bundle(entry: string): Promise<string> {
  const out = join(await bundleDir, `${entry.replace(/\W+/g, "-")}.mjs`);
  await build({ entryPoints: [join(REPO, entry)], outfile: out, bundle: true, platform: "node", format: "esm", target: "node20", logLevel: "silent", external: ["bufferutil", "utf-8-validate"] });
  return out;
}

/** Main with the bridge's defaults, or with `options` (the suites expose the whole store: `[""]`). */
export async function startElectronMain(options: MainOptions = {}): Promise<ElectronMain> {
  bundled ??= bundle("test/node/electron/main-process.ts");
  const root = await mkdtemp(join(tmpdir(), "sessionkit-electron-store-"));
  const worker = new Worker(await bundled, { workerData: { root, appUrl: APP_URL, ...options } });
  await once(worker, "message");
  return {
    worker,
    root,
    async newRenderer(rendererOptions = {}) {
      const { port1, port2 } = new MessageChannel();
      worker.postMessage({ type: "renderer", port: port2, ...rendererOptions }, [port2]);
      const [ready] = (await once(port1, "message")) as [{ webContents: number }];
      return { port: port1, webContents: ready.webContents };
    },
    async stats() {
      worker.postMessage({ type: "stats" });
      const [stats] = (await once(worker, "message")) as [MainStats];
      return stats;
    },
    async stop() {
      await worker.terminate();
      await rm(root, { recursive: true, force: true });
    },
  };
}

export async function removeBundles(): Promise<void> {
  await rm(await bundleDir, { recursive: true, force: true });
}
