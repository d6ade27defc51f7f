/** The shared SessionManager suite on the Node-side ports: memory and real files in a temp dir. */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { memoryStorage } from "../../adapters/memory/index.js";
import { nodeFsStorage, type NodeFsStorage } from "../../adapters/node-fs/index.js";
import { describeSessionManagerSuite } from "../shared/session-suite.js";

describeSessionManagerSuite("memory", async () => ({ storage: memoryStorage() }));

describeSessionManagerSuite(
  "node-fs",
  async () => {
    const root = await mkdtemp(join(tmpdir(), "sessionkit-session-suite-"));
    const ports: NodeFsStorage[] = [];
    const openPort = () => {
      const port = nodeFsStorage({ root });
      ports.push(port);
      return port;
    };
    const storage = openPort();
    return {
      storage,
      reopen: async () => {
        await storage.close();
        return openPort();
      },
      openSecond: async () => openPort(),
      cleanup: async () => {
        await Promise.all(ports.map((port) => port.close()));
        await rm(root, { recursive: true, force: true });
      },
    };
  },
  { persistent: true },
);
