/** Starts the main-process worker and connects renderers to it (see main-process.ts). */
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MessageChannel, Worker, type MessagePort } from "node:worker_threads";
import { build } from "esbuild";
import { REPO } from "../../shared/cli-runner.js";

export interface ElectronMain {
  worker: Worker;
  root: string;
  /** A port for a new renderer (its webContents is made in main); post it to a worker or use it here. */
  newRenderer(): Promise<{ port: MessagePort; webContents: number }>;
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

export async function startElectronMain(options: { readOnly?: boolean } = {}): Promise<ElectronMain> {
  bundled ??= bundle("test/node/electron/main-process.ts");
  const root = await mkdtemp(join(tmpdir(), "sessionkit-electron-store-"));
  const worker = new Worker(await bundled, { workerData: { root, ...options } });
  await once(worker, "message");
  return {
    worker,
    root,
    async newRenderer() {
      const { port1, port2 } = new MessageChannel();
      worker.postMessage({ type: "renderer", port: port2 }, [port2]);
      const [ready] = (await once(port1, "message")) as [{ webContents: number }];
      return { port: port1, webContents: ready.webContents };
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
