/**
 * Remote stores: 10k appends (~1–2 KB, `await flush()` every 4) through the Electron bridge —
 * main (serveStorageOverIpc over node-fs) in a worker thread, the renderer's SessionManager here,
 * every message crossing by structured clone as Electron's ipc does — against the same workload on
 * node-fs in this process. The Chromium-over-serve open is in `npm run bench:browser`.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exposeStorageBridge } from "../../adapters/electron/preload.js";
import { electronStorage } from "../../adapters/electron/renderer.js";
import type { StorageBridge } from "../../adapters/electron/types.js";
import { nodeFsStorage } from "../../adapters/node-fs/index.js";
import { removeBundles, startElectronMain } from "../../test/node/electron/harness.js";
import { rendererIpc } from "../../test/node/electron/renderer-ipc.js";
import { timeAppends } from "../browser/workload.js";
import { ratio, type Row } from "../lib/report.js";

const APPENDS = 10_000;
const FLUSH_EVERY = 4;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;

export async function benchRemote(runs: number): Promise<{ rows: Row[]; notes: string[] }> {
  const electron: number[] = [];
  const local: number[] = [];
  const main = await startElectronMain({ writable: ["sessions/"] });
  try {
    for (let round = 0; round < runs; round++) {
      const { port } = await main.newRenderer();
      const { ipcRenderer, contextBridge, window } = rendererIpc(port);
      exposeStorageBridge(contextBridge, ipcRenderer);
      const storage = electronStorage({ bridge: window.sessionkitStorage as StorageBridge });
      const overBridge = await timeAppends(storage, APPENDS, FLUSH_EVERY);
      await storage.close();
      port.close();
      electron.push(overBridge.ms);

      const root = await mkdtemp(join(tmpdir(), "sessionkit-bench-remote-"));
      const nodeFs = nodeFsStorage({ root });
      const inProcess = await timeAppends(nodeFs, APPENDS, FLUSH_EVERY);
      await nodeFs.close();
      await rm(root, { recursive: true, force: true });
      local.push(inProcess.ms);
      if (overBridge.lines !== inProcess.lines || overBridge.bytes !== inProcess.bytes) {
        throw new Error(`the bridge wrote ${overBridge.lines} lines / ${overBridge.bytes} bytes, node-fs ${inProcess.lines} / ${inProcess.bytes}: not the same workload`);
      }
    }
  } finally {
    await main.stop();
    await removeBundles();
  }
  const ours = median(electron);
  const peer = median(local);
  return {
    rows: [
      {
        name: `${APPENDS / 1000}k appends, \`await flush()\` every ${FLUSH_EVERY}: over the Electron bridge (main in a worker thread, structured clone) vs node-fs in process`,
        ours: `${Math.round(ours)} ms (min ${Math.round(Math.min(...electron))} ms)`,
        peer: `node-fs ${Math.round(peer)} ms (min ${Math.round(Math.min(...local))} ms)`,
        ratio: ratio(ours / peer),
        target: "report",
        verdict: "info",
        key: "remote.electronAppends",
        figures: { oursMs: ours, oursMinMs: Math.min(...electron), nodeFsMs: peer, nodeFsMinMs: Math.min(...local), ratioToNodeFs: ours / peer },
      },
    ],
    notes: [
      `Electron bridge: ${runs} rounds, bridge and node-fs interleaved; the bridge adds per flush one ipc round trip (append + sync travel as one batch only over message endpoints; over invoke they are two calls) and zod validation both ways.`,
    ],
  };
}
