/**
 * A dedicated worker that runs a SessionManager on the OPFS port directly (README, "OPFS: the
 * session in the worker"): no rpc hop between the session and its sync access handles. It takes
 * `{ root, cwd, count, flushEvery }`, appends `count` messages with a flush every `flushEvery`,
 * posts `{ path, ids, flushes }` and keeps the session open (its writer lock held) until it gets
 * "close".
 */
import { opfsWorkerStorage } from "../../adapters/opfs/index.js";
import { SessionManager } from "../../src/index.js";

self.onmessage = async (event: MessageEvent<{ root: string; cwd: string; count: number; flushEvery: number }>) => {
  try {
    const { root, cwd, count, flushEvery } = event.data;
    const storage = opfsWorkerStorage({ root });
    const sm = await SessionManager.create(storage, cwd, { deferUntilAssistant: false });
    const ids: string[] = [];
    let flushes = 0;
    for (let i = 0; i < count; i++) {
      ids.push(sm.appendMessage({ role: "user", content: `message ${i}`, timestamp: 1_767_225_600_000 + i }));
      if ((i + 1) % flushEvery === 0) {
        await sm.flush();
        flushes++;
      }
    }
    await sm.flush();
    self.onmessage = async () => {
      await sm.close();
      await storage.close();
      self.postMessage("closed");
    };
    self.postMessage({ path: sm.getSessionFile(), ids, flushes });
  } catch (error) {
    self.postMessage({ error: String(error) });
  }
};
